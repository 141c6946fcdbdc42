#!/usr/bin/env bash
# Rebuild the BERT chain (bert, then distilbert, electra and bert-nsp side by side) and ALBERT's two stages on one
# GPU, inside one device call of the project's GPU machine (../shared/gpu/README.md): the recipes are those of
# `python -m app.training`, with --device cuda. What ran this way (2026-11-27, one H100, torch 2.11 + CUDA 13.0):
# bert 6000 steps in 2 min of training, distilbert 3000 in 1.5, albert 11000 in 5, bert-nsp 6000 in 2.7, all four
# side by side in 430 s of wall time; ELECTRA's three stages need ~6 min alone and albert-sop ~1, so give the call
# 600 s or finish those on the CPU (`--precision fp32` on an AVX2-only CPU): every recipe resumes its work folder.
#
# Prepare, in the project root (.gpu/ is ignored by git and travels with `carry: [".gpu"]`; the call may carry
# 64 MiB with the checkout, so the archive holds only what training imports: transformers, huggingface_hub and
# plotly, which app.core.preload imports):
#   ../shared/gpu/pack-site.sh .gpu
#   tar -C ../shared/corpus -cJf .gpu/corpus.tar.xz tinystories_train.txt tinystories_valid.txt
# Run (device tool): command `BUDGET=430 bash scripts/device_rebuild.sh`, carry [".gpu"], timeout_s 560.
# It brings back /tmp/out (the checkpoints, logs) and the state of any recipe that did not finish, in 15 MiB parts:
#   cat back.tar.part* | tar -x   then copy out/<model> into assets/models (set "local_files_only" back to false
#   in tokenizer_config.json: HF_HUB_OFFLINE=1 writes true there).
set -u
START=$(date +%s); BUDGET=${BUDGET:-430}; END=$((START + BUDGET))
mkdir -p /tmp/site /tmp/corpus /tmp/logs && tar -C /tmp/site -xJf .gpu/site.tar.xz && tar -C /tmp/corpus -xJf .gpu/corpus.tar.xz
export PYTHONPATH=/tmp/site:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers, tokenizers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'tokenizers', tokenizers.__version__, 'cuda', torch.cuda.is_available())"
T="python3 -m app.training --corpus /tmp/corpus --out /tmp/out --work /tmp/work --device cuda --threads 3"
left() { echo $((END - $(date +%s))); }
go() {  # go LOGNAME ARGS...: one recipe under the deadline
  local name=$1; shift; local l; l=$(left); [ "$l" -gt 5 ] || { echo "[$name] no time left" >>/tmp/logs/summary; return 1; }
  local t=$(date +%s); timeout "$l" $T "$@" >>"/tmp/logs/$name.log" 2>&1; local rc=$?
  echo "[$name] rc=$rc $(( $(date +%s) - t )) s (at +$(( $(date +%s) - START )) s)" >>/tmp/logs/summary; return $rc
}
chain_bert() {
  go bert --recipe bert || return
  go distilbert --recipe distilbert &
  go electra --recipe electra &
  go bert-nsp --recipe bert-nsp &
  wait
}
chain_albert() { go albert --recipe albert && go albert-sop --recipe albert-sop; }
chain_bert & chain_albert & wait
cat /tmp/logs/summary
for f in /tmp/logs/*.log; do echo "== $f"; grep -v "^\s*$" "$f" | tail -n 6; done
# what comes back: the finished checkpoints, then the work state of what did not finish, in parts of 15 MiB (at most
# 64 MiB come back: ELECTRA's stage-0 state alone is 53 MB, so an unfinished ELECTRA may not fit)
cp /tmp/logs/*.log /tmp/logs/summary /tmp/out/ 2>/dev/null
done_models=$(cd /tmp/out && ls -d */ 2>/dev/null | tr -d /)
echo "finished: $done_models"
keep=""; for w in bert distilbert electra-disc-from-bert electra-generator electra-discriminator bert-nsp albert albert-sop; do
  [ -f /tmp/work/$w/state.pt ] || continue
  case $w in electra-*) m=electra-discriminator;; *) m=$w;; esac
  [ -f /tmp/out/$m/model.safetensors ] || keep="$keep work/$w/state.pt"
done
echo "unfinished states: ${keep:-none}"
tar -C /tmp -cf /tmp/back.tar out $keep
split -b 15M -d /tmp/back.tar "$OUT/back.tar.part"
ls -la "$OUT"
