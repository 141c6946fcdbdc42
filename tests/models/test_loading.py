"""The loader: one from_pretrained path, a fast fallback when the hub cannot be reached, device choice,
CUDA out-of-memory fallback, and the cache keys the app uses."""

import re
import socket
import threading
import time

import pytest
import torch

from app.models import device as devices
from app.models import loading
from tests.conftest import require_bundled


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


@pytest.fixture
def hub_calls(monkeypatch):
    """What the hub source asked: the probes (hub id, timeout) and the downloads (their keyword arguments)."""
    calls = {"probes": [], "fetches": []}
    probe, fetch = loading.hub_reachable, loading.fetch

    def counted_probe(hub_id, timeout=loading.HUB_PROBE_TIMEOUT_S):
        calls["probes"].append((hub_id, timeout))
        return probe(hub_id, timeout)

    def counted_fetch(*args, **kwargs):
        calls["fetches"].append(kwargs)
        return fetch(*args, **kwargs)

    monkeypatch.setattr(loading, "hub_reachable", counted_probe)
    monkeypatch.setattr(loading, "fetch", counted_fetch)
    return calls


def test_unreachable_hub_falls_back_to_bundled_after_one_bounded_probe(black_hole, hub_calls):
    """A hub that accepts and never answers costs one probe bounded by HUB_PROBE_TIMEOUT_S (1.5 s), then the
    bundled stand-in: no download is started, nothing is asked again. (How long that takes on this machine is
    scripts/benchmark.py's business, not a test's.)"""
    from app.core import preload

    preload.load()  # a lecture's server has its libraries imported before anyone asks for the hub
    loaded = loading.load("bert", source="hub")
    assert hub_calls == {"probes": [("google/bert_uncased_L-4_H-256_A-4", loading.HUB_PROBE_TIMEOUT_S)], "fetches": []}
    assert loading.HUB_PROBE_TIMEOUT_S <= 2.0  # the probe's whole bound: a lecture waits no longer
    assert loaded.source == "bundled" and loaded.is_bundled
    assert "google/bert_uncased_L-4_H-256_A-4 is unavailable" in loaded.notice
    assert "the hub could not be reached" in loaded.notice or "did not answer within 1.5 s" in loaded.notice
    assert "bundled stand-in" in loaded.notice


def test_offline_flag_falls_back_at_once(monkeypatch, hub_calls):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(loading.urllib.request, "urlopen", lambda *a, **k: pytest.fail("the hub was asked"))
    loaded = loading.load("roberta", source="hub")
    assert hub_calls["fetches"] == []  # at once: no request, no download
    assert loaded.source == "bundled" and "HF_HUB_OFFLINE is set" in loaded.notice


def test_bundled_source_needs_no_network_and_says_nothing(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a closed port: must never be asked
    loaded = loading.load("albert")
    assert loaded.source == "bundled" and loaded.notice is None


@pytest.mark.parametrize(
    "key", ["bert", "roberta", "albert", "distilbert", "electra-discriminator", "xlnet", "deberta", "modernbert"]
)
def test_loaded_models_are_eval_eager_float32_and_give_attentions(key, bundled):

    require_bundled(key)
    loaded = bundled(key)
    assert next(loaded.model.parameters()).dtype == torch.float32  # stored as float16, loaded as float32
    model, tok = loaded.model, loaded.tokenizer
    assert not model.training
    assert model.config._attn_implementation == "eager"
    enc = tok("The little girl found a red ball.", return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_attentions=True)
    assert (
        len(out.attentions) == model.config.num_hidden_layers
        if hasattr(model.config, "num_hidden_layers")
        else out.attentions
    )
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
    assert (
        gen.model.generator_lm_head.weight.data_ptr() == disc.model.electra.embeddings.word_embeddings.weight.data_ptr()
    )


def test_one_tie_for_the_catalogues_pairs_and_brought_ones(monkeypatch):
    """loading.tie_pairs ties every pair whose two models were loaded (load_set), or, for brought models, only a pair
    whose two are both brought (own.load_set): one function, and the same tensor after it on both paths."""
    require_bundled("electra-generator", "electra-discriminator")
    tied, tie_pairs = [], loading.tie_pairs
    monkeypatch.setattr(loading, "tie_pairs", lambda loaded, among=None: tied.append(among) or tie_pairs(loaded, among))
    pair = loading.load_set(["electra-generator", "electra-discriminator"])
    assert tied == [None]
    gen, disc = pair["electra-generator"].model, pair["electra-discriminator"].model
    assert gen.electra.embeddings.word_embeddings.weight is disc.electra.embeddings.word_embeddings.weight
    assert gen.generator_lm_head.weight is disc.electra.embeddings.word_embeddings.weight
    # brought: two fresh copies of the pair, tied only when both are among the brought keys
    fresh = {k: loading.load(k) for k in ("electra-generator", "electra-discriminator")}
    assert tie_pairs(fresh, among={"electra-generator"}) == []  # one brought, one catalogue: never tied
    gen, disc = fresh["electra-generator"].model, fresh["electra-discriminator"].model
    assert gen.electra.embeddings is not disc.electra.embeddings
    assert tie_pairs(fresh, among=set(fresh)) == [("electra-generator", "electra-discriminator")]
    assert gen.electra.embeddings.word_embeddings.weight is disc.electra.embeddings.word_embeddings.weight
    assert gen.generator_lm_head.weight is disc.electra.embeddings.word_embeddings.weight


@pytest.fixture
def machine(monkeypatch):
    """machine(driver=..., cuda_build=..., cuda_works=...): what this host has, for the device answer."""

    def set_up(driver: bool, cuda_build: bool, cuda_works: bool):
        devices.cuda_available.cache_clear()
        monkeypatch.setattr(devices, "nvidia_driver_present", lambda: driver)
        monkeypatch.setattr(devices, "torch_built_with_cuda", lambda: cuda_build)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda_works)

    yield set_up
    devices.cuda_available.cache_clear()


def test_a_driver_with_a_cpu_only_torch_is_cpu_everywhere(machine):
    """The old defect: an NVIDIA driver file made the sidebar offer CUDA and cache models under "cuda"
    while torch (a CPU build) ran them on the CPU, and the badge said CUDA."""
    machine(driver=True, cuda_build=False, cuda_works=False)
    assert devices.cuda_available() is False
    assert devices.resolve("auto", "float32") == ("cpu", "float32", None)
    dev, dtype, notice = devices.resolve("cuda", "float32")
    assert (dev, dtype) == ("cpu", "float32") and "CUDA is not available" in notice
    device, dtype, _ = devices.resolve("cuda", "float32")  # resolved once, as a page's run does
    loaded = loading.load("distilbert", device=device, dtype=dtype)
    assert loaded.device == "cpu" and loaded.badge_line()[1] == "cpu"


def test_a_loader_takes_the_device_resolved_and_never_resolves_it_again(monkeypatch):
    """The device is resolved once, by the caller (a page: app.ui.model_settings, once per run); load and load_set
    take the pair as it is, and refuse one that was never resolved rather than resolve it a second time."""
    monkeypatch.setattr(devices, "resolve", lambda *a: pytest.fail("the loader resolved the device again"))
    loaded = loading.load_set(["distilbert"], "bundled", "cpu", "float32")["distilbert"]
    assert (loaded.device, loaded.dtype) == ("cpu", "float32")
    for device, dtype in (("auto", "float32"), ("cpu", "float16"), ("tpu", "float32"), ("cpu", "int4")):
        with pytest.raises(ValueError, match="not resolved"):
            loading.load("distilbert", device=device, dtype=dtype)


def test_cuda_is_asked_of_torch_only_when_it_could_be_there(machine):
    machine(driver=False, cuda_build=True, cuda_works=True)
    assert devices.cuda_available() is False  # no driver: torch is not even asked
    machine(driver=True, cuda_build=True, cuda_works=False)
    assert devices.cuda_available() is False  # torch says no
    machine(driver=True, cuda_build=True, cuda_works=True)
    assert devices.cuda_available() is True
    assert devices.resolve("auto", "bfloat16") == ("cuda", "bfloat16", None)
    assert devices.resolve("cpu", "float16") == (
        "cpu",
        "float32",
        "half precision is only offered on GPU; running float32 on CPU.",
    )
    assert devices.resolve("tpu", "float32")[0] == "cpu" and devices.resolve("cpu", "int4")[1] == "float32"


def test_this_machines_torch_build_is_read_without_importing_it():
    import subprocess
    import sys

    code = (
        "import sys; from app.models import device; device.torch_built_with_cuda(); device.cuda_available(); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "True" if devices.nvidia_driver_present() and devices.torch_built_with_cuda() else "False"
    )
    assert devices.torch_built_with_cuda() == (torch.version.cuda is not None)


def test_cuda_out_of_memory_falls_back_to_cpu(monkeypatch):
    real = loading._from_pretrained

    def from_pretrained(variant, location, local_only):  # noqa: E306
        model, tok = real(variant, location, local_only)
        to = model.to

        def to_or_oom(*args, **kwargs):
            if kwargs.get("device") == "cuda":
                raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
            return to(*args, **kwargs)

        model.to = to_or_oom
        return model, tok

    monkeypatch.setattr(loading, "_from_pretrained", from_pretrained)
    devices.cuda_available.cache_clear()
    monkeypatch.setattr(devices, "cuda_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    loaded = loading.load("distilbert", device="cuda", dtype="float16")
    assert (loaded.device, loaded.dtype) == ("cpu", "float32")
    assert "ran out of memory" in loaded.notice and next(loaded.model.parameters()).device.type == "cpu"


def test_missing_bundled_checkpoint_is_a_readable_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BVE_BUNDLED_DIR", str(tmp_path))
    with pytest.raises(loading.ModelUnavailable, match="no bundled checkpoint"):
        loading.load("bert")


def test_app_cache_is_keyed_by_variant_source_device_dtype():
    from app.ui import loading as ui_loading

    a = ui_loading._load("distilbert", "bundled", "cpu", "float32")
    assert ui_loading._load("distilbert", "bundled", "cpu", "float32") is a  # shared, loaded once
    assert ui_loading._load("bert", "bundled", "cpu", "float32") is not a
    assert ui_loading._load("distilbert", "auto", "cpu", "float32") is not a  # another key, another entry
    with pytest.raises(ValueError, match="not resolved"):  # the page resolves the device first (model_settings)
        ui_loading._load("distilbert", "bundled", "cpu", "bfloat16")
    assert a.identity == ("distilbert", "bundled", a.location, "cpu", "float32")


# -- the Hub source against a slow or hostile loopback hub (tests/hubserver.py) ------------------------------


@pytest.fixture(scope="module")
def two_repos(tmp_path_factory):
    from tests.hubserver import build_catalogue_repos

    return build_catalogue_repos(tmp_path_factory.mktemp("hub-repos"), keys=["bert", "roberta"])


@pytest.fixture
def hub(two_repos):
    from tests.hubserver import HubServer

    with HubServer(two_repos) as server:
        yield server


def test_a_trickling_hub_keeps_no_one_else_waiting_and_gives_up_at_the_deadline(hub, tmp_path, use_cache, monkeypatch):
    """The download runs outside the load lock, within its deadline: another visitor's bundled load goes on
    while one visitor's Hub load trickles, and that one falls back to the bundled stand-in on time."""
    from app.core import preload
    from tests.models.conftest import written_outside

    preload.load()
    home = tmp_path / "hf"
    use_cache(home, hub)
    hub.trickle, hub.trickle_paths = 0.02, "/resolve/"  # a byte every 20 ms: never silent long enough for a timeout
    monkeypatch.setenv("BVE_DOWNLOAD_DEADLINE", "4")
    downloading, heard, results = threading.Event(), [], {}

    def report(done, total):
        heard.append((done, total))
        downloading.set()

    def hub_visitor():
        results["hub"] = loading.load("roberta", source="hub", progress=report)

    first = threading.Thread(target=hub_visitor, daemon=True)
    first.start()
    assert downloading.wait(5), "the Hub load reported no progress"
    second = threading.Thread(target=lambda: results.setdefault("bundled", loading.load("bert")), daemon=True)
    second.start()
    second.join(10)
    assert "bundled" in results, "a bundled load waited behind the Hub source's download"
    assert first.is_alive(), "the Hub load ended before the other visitor's load: the test proves nothing"
    first.join(10)
    loaded = results["hub"]
    assert loaded.source == "bundled" and "did not finish within 4 s" in loaded.notice, loaded.notice
    assert heard and all(total for _, total in heard[1:]) and heard[-1][0] > 0
    assert loaded.retry_hub is not None and not loaded.stale  # a failure, to be asked again later
    assert written_outside(tmp_path, home) == []


def test_the_hubs_reason_phrase_is_text_in_the_notice(hub, tmp_path, use_cache):
    """The fallback notice is markdown (st.info): what the hub says about an error stays literal."""
    from app.core.text import md

    use_cache(tmp_path / "hf", hub)
    reason = "Busy ![x](http://127.0.0.1:9/pwned.png) [help](http://evil.example) :red[alarm] `$x$`"
    hub.errors, hub.reason = {r"^/api/models/": 503}, reason
    loaded = loading.load("roberta", source="hub")
    assert loaded.source == "bundled"
    assert md(reason) in loaded.notice and "503" in loaded.notice, loaded.notice
    prose = re.sub(r"`[^`]*`", "", loaded.notice)  # what is left outside code spans is our own wording
    assert not re.search(r"\]\(|!\[|:red\[|\$", prose), prose


def test_a_failed_hub_is_asked_again_after_a_while(hub, tmp_path, use_cache, monkeypatch):
    """A fallback after a failed hub says when it goes stale (``HUB_RETRY_S``), so a cache of loaded models
    can ask again; a model that did load from the hub never goes stale."""
    use_cache(tmp_path / "hf", hub)
    monkeypatch.setattr(loading, "HUB_RETRY_S", 0.3)
    hub.mode = "500"
    failed = loading.load("bert", source="hub")
    assert failed.source == "bundled" and failed.retry_hub is not None and not failed.stale
    time.sleep(0.35)
    assert failed.stale
    hub.mode = "ok"
    again = loading.load("bert", source="hub")
    assert again.source == "hub" and again.retry_hub is None and not again.stale
    assert loading.load("bert", source="bundled").retry_hub is None


def test_the_app_keeps_a_failed_hub_load_only_until_it_goes_stale(hub, tmp_path, use_cache, monkeypatch):
    """The app's shared model cache: a fallback after a failed hub is served from the cache until it goes stale,
    then the hub is asked again; a hub that recovered is then used without a restart."""
    from app.ui import loading as ui_loading

    use_cache(tmp_path / "hf", hub)
    monkeypatch.setattr(loading, "HUB_RETRY_S", 0.5)
    args = ("bert", "hub", "cpu", "float32")
    ui_loading._load.clear(*args)
    try:
        hub.mode = "500"
        failed = ui_loading.shared_model(*args)
        assert failed.source == "bundled" and "the hub answered 500" in failed.notice
        hub.mode = "ok"
        assert ui_loading.shared_model(*args) is failed  # cached, for now
        time.sleep(0.55)
        recovered = ui_loading.shared_model(*args)
        assert recovered.source == "hub" and recovered.notice is None
        assert ui_loading.shared_model(*args) is recovered  # and a success stays cached
    finally:
        ui_loading._load.clear(*args)
