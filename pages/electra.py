"""ELECTRA: a generator swaps words, a discriminator scores every token (replaced-token detection)."""

import math
from pathlib import Path

import streamlit as st
import torch

from app import electra, state, ui
from app.figures import electra as figures

DEFAULT_TEXT = "The little girl found a red ball in the park. She was happy and ran home to show her mom."
D = electra.DEFAULTS
SPEC = (
    state.Param("text", "str", DEFAULT_TEXT, max_len=1000),
    state.Param("rate", "float", D.mlm_probability, lo=0.05, hi=0.5),
    state.Param("temperature", "float", D.temperature, lo=0.1, hi=3.0),
    state.Param("seed", "int", 0, lo=0, hi=2**31 - 1),
    state.Param("edit_pos", "int", 7, lo=0, hi=511),
    state.Param("edit_word", "str", "ran", max_len=40),
)
ui.bind(SPEC)


@st.cache_data(max_entries=128, show_spinner=False)
def generator_side(_gen, identity, input_ids: tuple, special: tuple, rate: float, seed: int, mask_id: int):
    """(masked (T,) bool, the generator's logits at the masked positions (n, V)): everything that does
    not depend on the temperature, so moving that slider only re-samples."""
    masked = electra.mask_positions(torch.tensor(special), rate, torch.Generator().manual_seed(seed))
    ids = electra.masked_input(torch.tensor(input_ids), masked, mask_id)
    return masked, electra.generator_logits(_gen.model, ids, masked)


@st.cache_data(max_entries=256, show_spinner=False)
def discriminator_side(_disc, identity, input_ids: tuple) -> torch.Tensor:
    return electra.discriminator_scores(_disc.model, torch.tensor(input_ids))


@st.cache_data(max_entries=8, show_spinner=False)
def training_curves(folder: str, mtime: float):
    return electra.read_curves(folder)


def code(token: str) -> str:
    """A token as a markdown code span (a backtick inside would end it early)."""
    return "`" + str(token).replace("`", "'") + "`"


def fmt(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.2f}"


def resample() -> None:
    st.session_state["seed"] = (int(st.session_state.get("seed", 0)) + 1) % 2**31


st.title("ELECTRA: spot the fake")
st.markdown(
    "BERT learns by filling in the ~15% of tokens that were masked, so only those positions teach it anything. "
    "**ELECTRA** (Clark et al., 2020) turns pre-training into a game with two players. A small **generator** "
    "(itself a masked LM) fills each masked position by *sampling* a plausible word. A **discriminator** then "
    "reads the corrupted sentence and says, for **every** token, how likely it is that the token was replaced. "
    "The discriminator is the model you keep. Below, the real pair plays the game on your sentence."
)

text = st.text_area("Your sentence", key="text", max_chars=1000, height=80)
c1, c2, c3, c4 = st.columns([3, 3, 2, 1.8], vertical_alignment="bottom")
rate = c1.slider("Masking rate", 0.05, 0.5, step=0.01, key="rate",
                 help="Share of the word pieces the generator must fill (ELECTRA: 15%).")
temperature = c2.slider("Generator temperature", 0.1, 3.0, step=0.05, key="temperature",
                        help="Samples come from softmax(logits / T). T = 1 is the paper; low T picks the generator's "
                             "favourite (often the original word), high T picks wilder words.")
seed = c3.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed")
c4.button("Resample", icon=":material/casino:", on_click=resample, help="Next seed: new masked positions and new samples.")

if not text.strip():
    st.warning("Type a sentence to start (the box is empty or only whitespace).")
    ui.share_link(SPEC)
    st.stop()

gen = ui.model("electra-generator")
disc = ui.model("electra-discriminator")
tok = gen.tokenizer

encoded = electra.encode(tok, text, D.max_tokens)
if encoded.truncated:
    st.warning(f"Your text has {encoded.n_pieces} word pieces; the strip shows the first {encoded.n_kept} "
               f"(a cap of {D.max_tokens} tokens with [CLS] and [SEP], so every cell stays readable). The rest is cut.")
if encoded.n_unknown:
    st.info(f"{encoded.n_unknown} piece(s) of your text are outside the vocabulary and became {code(tok.unk_token)} "
            "(emoji, CJK, right-to-left scripts and rare symbols do: the models saw only simple English). "
            "They stay in the sentence but are never masked.")
if encoded.n_content == 0:
    st.warning("Nothing in this text is in the vocabulary, so there is nothing to mask. Try an English sentence, "
               f"e.g. *{DEFAULT_TEXT}*")
    ui.share_link(SPEC)
    st.stop()

# ----------------------------------------------------------------------------- the game, stage by stage
with ui.timed_forward():
    masked, g_logits = generator_side(gen, gen.identity, encoded.input_ids, encoded.special, float(rate), int(seed),
                                      tok.mask_token_id)
    corrupted, gen_info = electra.sample_round(tok, encoded, masked, g_logits, float(temperature), int(seed), D.top_k)
    scores = discriminator_side(disc, disc.identity, tuple(corrupted.tolist()))
rnd = electra.assemble_round(tok, encoded, masked, corrupted, gen_info, scores)

st.header("One round of the game")
ui.show_figure(figures.pipeline_figure(rnd, D.threshold), "electra-pipeline")
st.caption(
    "Follow a column down. **2** amber: masked. **3** what the generator sampled there (red: a real replacement, "
    "green with (=): it sampled the original word back). **4** the sentence the discriminator reads. **5** its "
    "P(replaced) for every token, blue = looks original, red = looks replaced. **6** the truth it is trained on. "
    f"Hover a cell for exact values; on row 3, for the generator's top {D.top_k} proposals at temperature "
    f"{temperature:g}."
)
same = [i for i, s in enumerate(rnd.same_as_original) if s]
if same:
    listed = ", ".join(f"{code(rnd.tokens[i])} (position {i})" for i in same)
    st.info(f"The generator sampled the original token back at {listed}. As in the paper, such a token counts as "
            "**original** (label 0): the discriminator is asked whether the token is *wrong*, not whether it was masked.")

# ----------------------------------------------------------------------------- detection quality
st.subheader("How well did the discriminator spot the fakes?")
keep = electra.content_positions(rnd.special)
det = electra.detection_metrics(rnd.scores, rnd.labels, keep, D.threshold)
m1, m2, m3, m4 = st.columns(4)
m1.metric("Replaced tokens", f"{det.n_replaced} of {det.n_tokens}")
m2.metric(f"Precision at {D.threshold:g}", fmt(det.precision), help="Of the tokens it flagged, the share really replaced.")
m3.metric(f"Recall at {D.threshold:g}", fmt(det.recall), help="Of the replaced tokens, the share it flagged.")
m4.metric("ROC-AUC", fmt(det.auc), help="Chance that a random replaced token scores above a random original one.")
note = f"Scored on the {det.n_tokens} word pieces of the sentence ([CLS], [SEP] and [UNK] are never replaced)."
if det.n_flagged == 0:
    note += f" No token scored above {D.threshold:g}, so precision is undefined (—)."
st.caption(note)
if not det.both_classes:
    st.info("ROC-AUC needs both replaced and original tokens, and this round has "
            + ("no replaced token (every sample equalled the original)" if det.n_replaced == 0 else "only replaced tokens")
            + ": resample, or raise the temperature or the masking rate.")

# ----------------------------------------------------------------------------- hand edits
st.header("Your turn: fake a word")
st.markdown("Replace one token of your sentence by a word of your own and watch the discriminator judge every "
            "token again. No generator is involved: you are the forger.")
positions = [i for i, s in enumerate(encoded.special) if not s]
if st.session_state.get("edit_pos") not in positions:
    wanted = st.session_state.get("edit_pos")
    st.session_state["edit_pos"] = min(positions, key=lambda i: abs(i - int(wanted or 0)))
    st.info(f"Position {wanted} is not a word piece of this sentence; using position {st.session_state['edit_pos']}.")
e1, e2 = st.columns(2)
edit_pos = e1.selectbox("Token to replace", positions, key="edit_pos",
                        format_func=lambda i: f"{i} · {encoded.tokens[i]}")
edit_word = e2.text_input("Replacement word", key="edit_word", max_chars=40,
                          help="One word. It must be in the vocabulary; a word that splits into pieces uses its first piece.")
edit = electra.apply_edit(tok, encoded.input_ids, int(edit_pos), edit_word)
if edit.message:
    (st.info if edit.ok else st.warning)(edit.message)
if not edit_word.strip():
    st.caption("Type a word to replace the chosen token; below, the discriminator reads your sentence untouched.")
with ui.timed_forward():
    edit_scores = discriminator_side(disc, disc.identity, edit.input_ids)
edit_labels = electra.replaced_labels(torch.tensor(edit.input_ids), torch.tensor(encoded.input_ids)).tolist()
edited_tokens = tok.convert_ids_to_tokens(list(edit.input_ids))
ui.show_figure(figures.edit_figure(edited_tokens, edit_scores.tolist(), edit_labels, list(encoded.special),
                                   int(edit_pos) if edit.ok else None, D.threshold, list(encoded.tokens)), "electra-edit")
others = [float(edit_scores[i]) for i in positions if i != edit_pos]
if edit.ok and edit_labels[edit_pos]:
    mine = float(edit_scores[edit_pos])
    rank = 1 + sum(o > mine for o in others)
    st.markdown(f"Your {code(edit.piece)} at position {edit_pos} gets **P(replaced) = {mine:.3f}**; the most "
                f"suspicious untouched token gets {max(others, default=float('nan')):.3f}. Rank {rank} of "
                f"{len(others) + 1}: " + ("**caught**." if rank == 1 and mine > D.threshold else
                                         "the top suspect." if rank == 1 else "it slipped past."))
elif edit.ok:
    st.markdown(f"The sentence is unchanged, so every label is *original*; the highest P(replaced) is "
                f"{max(float(edit_scores[i]) for i in positions):.3f}.")

# ----------------------------------------------------------------------------- the signal count
st.header("Why this is efficient: every token teaches")
counts = electra.signal_counts(len(rnd.tokens), sum(rnd.masked))
ui.show_figure(figures.signal_figure(counts), "electra-signal", height=260)
st.markdown(
    f"For this very sentence, the masked LM gets a loss term at the **{counts['mlm']}** masked positions only; "
    f"replaced-token detection gets one at **all {counts['rtd']}** tokens ([CLS] and [SEP] included, as in "
    "training). Clark et al.'s efficiency analysis traces much of ELECTRA's advantage to this: a discriminator "
    "trained on the masked 15% only (*ELECTRA 15%*) loses much of the gain."
)

# ----------------------------------------------------------------------------- training curves
st.header("How the bundled discriminator learned")
if not disc.is_bundled:
    st.caption(f"The discriminator is {code(disc.location)} from the hub; training curves are bundled only "
               "with the offline stand-in (switch the sidebar to bundled models to see them).")
else:
    curves_file = Path(disc.location) / "curves.json"
    curves = training_curves(disc.location, curves_file.stat().st_mtime if curves_file.exists() else 0.0)
    if curves is None:
        st.caption("No training curves were saved beside this checkpoint.")
    else:
        ui.show_figure(figures.auc_curve_figure(curves), "electra-auc-curve")
        final = curves["final"].get("discriminator", {})
        n_points = len(curves["eval_step"])
        line = (f"Held-out ROC-AUC at each evaluation ({n_points} point{'s' if n_points != 1 else ''}, up to step "
                f"{curves['eval_step'][-1]}), on 256 held-out sequences corrupted by the generator.")
        if final:
            line += (f" Final, on the whole held-out set: ROC-AUC {final.get('auc', float('nan')):.3f}, precision "
                     f"{final.get('precision', float('nan')):.3f}, recall {final.get('recall', float('nan')):.3f}.")
        st.caption(line)

st.markdown(
    "**Takeaway:** ELECTRA replaces *predict the masked word* with *spot the replaced word*. The generator makes "
    "the fakes hard (it proposes plausible words, and sometimes the original itself); the discriminator learns "
    "from every token of every sentence instead of 15%, which is why a small ELECTRA trains so efficiently."
)
ui.share_link(SPEC)
