"""The loader: one from_pretrained path, a fast fallback when the hub cannot be reached, device choice,
CUDA out-of-memory fallback, and the cache keys the app uses."""

import socket
import threading
import time

import pytest
import torch

from app.models import device as devices
from app.models import loading


@pytest.fixture
def black_hole(monkeypatch):
    """A loopback 'hub' that accepts connections and never answers: the worst network for a lecture hall."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    yield
    stop.set()
    thread.join()
    for c in held:
        c.close()
    server.close()


def test_unreachable_hub_falls_back_to_bundled_within_two_seconds(black_hole):
    started = time.perf_counter()
    loaded = loading.load("bert", source="hub")
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0, f"fallback took {elapsed:.2f} s"
    assert loaded.source == "bundled" and loaded.is_bundled
    assert "google/bert_uncased_L-4_H-256_A-4 is unavailable" in loaded.notice
    assert "bundled stand-in" in loaded.notice


def test_offline_flag_falls_back_at_once(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    loaded = loading.load("roberta", source="hub")
    assert time.perf_counter() - started < 2.0
    assert loaded.source == "bundled" and "HF_HUB_OFFLINE is set" in loaded.notice


def test_bundled_source_needs_no_network_and_says_nothing(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a closed port: must never be asked
    loaded = loading.load("albert")
    assert loaded.source == "bundled" and loaded.notice is None


@pytest.mark.parametrize("key", ["bert", "roberta", "albert", "distilbert", "electra-discriminator", "xlnet"])
def test_loaded_models_are_eval_eager_and_give_attentions(key, bundled):
    loaded = bundled(key)
    model, tok = loaded.model, loaded.tokenizer
    assert not model.training
    assert model.config._attn_implementation == "eager"
    enc = tok("The little girl found a red ball.", return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_attentions=True)
    assert len(out.attentions) == model.config.num_hidden_layers if hasattr(model.config, "num_hidden_layers") else out.attentions
    first = out.attentions[0][0] if isinstance(out.attentions[0], tuple) else out.attentions[0]
    assert torch.allclose(first.sum(-1), torch.ones_like(first.sum(-1)), atol=1e-4)


def test_xlnet_loads_as_an_lm_head_model_with_left_padding(bundled):
    loaded = bundled("xlnet")
    assert type(loaded.model).__name__ == "XLNetLMHeadModel"
    assert loaded.tokenizer.padding_side == "left"
    ids = loaded.tokenizer("The cat sat.")["input_ids"]
    assert loaded.tokenizer.convert_ids_to_tokens(ids[-2:]) == ["<sep>", "<cls>"]


def test_electra_pair_shares_embeddings_again(bundled):
    gen, disc = bundled("electra-generator"), bundled("electra-discriminator")
    assert gen.model.electra.embeddings is disc.model.electra.embeddings
    assert gen.model.generator_lm_head.weight.data_ptr() == disc.model.electra.embeddings.word_embeddings.weight.data_ptr()


def test_device_choice_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert devices.available_devices() == ["cpu"] and devices.default_device() == "cpu"
    assert devices.resolve("cuda", "float16") == ("cpu", "float32", "half precision is only offered on GPU; running float32 on CPU.")
    dev, dtype, notice = devices.resolve("cuda", "float32")
    assert (dev, dtype) == ("cpu", "float32") and "cuda is not available" in notice
    assert devices.resolve("cpu", "float32") == ("cpu", "float32", None)


def test_device_choice_with_cuda_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert devices.available_devices() == ["cuda", "cpu"] and devices.default_device() == "cuda"
    assert devices.resolve("cuda", "bfloat16") == ("cuda", "bfloat16", None)


def test_cuda_out_of_memory_falls_back_to_cpu(monkeypatch):
    real = loading._from_pretrained

    def from_pretrained(variant, location, local_only):
        model, tok = real(variant, location, local_only)
        to = model.to

        def to_or_oom(*args, **kwargs):
            if kwargs.get("device") == "cuda":
                raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
            return to(*args, **kwargs)

        model.to = to_or_oom
        return model, tok

    monkeypatch.setattr(loading, "_from_pretrained", from_pretrained)
    monkeypatch.setattr(devices, "available_devices", lambda: ["cuda", "cpu"])
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    loaded = loading.load("distilbert", device="cuda", dtype="float16")
    assert (loaded.device, loaded.dtype) == ("cpu", "float32")
    assert "ran out of memory" in loaded.notice and next(loaded.model.parameters()).device.type == "cpu"


def test_missing_bundled_checkpoint_is_a_readable_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BVE_BUNDLED_DIR", str(tmp_path))
    with pytest.raises(loading.ModelUnavailable, match="no bundled checkpoint"):
        loading.load("bert")


def test_app_cache_is_keyed_by_variant_source_device_dtype():
    from app import ui

    a = ui._load("distilbert", "bundled", "cpu", "float32")
    assert ui._load("distilbert", "bundled", "cpu", "float32") is a  # shared, loaded once
    assert ui._load("bert", "bundled", "cpu", "float32") is not a
    assert ui._load("distilbert", "bundled", "cpu", "bfloat16") is not a  # another key, another entry
    assert a.identity == ("distilbert", "bundled", a.location, "cpu", "float32")
