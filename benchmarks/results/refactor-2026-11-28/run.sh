#!/usr/bin/env bash
# Before (b01e824's binary) and after (HEAD) in one run: epoch time and peak RSS, W=2 over shared
# memory, 200k-node generated graph, GCN 3x256, 3 alternated rounds.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
old=${OLD_BIN:?an adaqp binary of the commit before} new=${NEW_BIN:-build/src/adaqp}
[[ -d g ]] || $new generate --set dataset.synthetic.num_nodes=200000 --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 --set dataset.synthetic.num_classes=16 --out g >/dev/null
job=(--set dataset.path=g --set model.layers=3 --set model.hidden=256 --set training.epochs=6 --set training.eval_every=6 --set partition.parts=2 --set partition.dir=g-p2 --set training.threads=1 --set output.log_level=warn)
[[ -d g-p2 ]] || $new partition "${job[@]}" --out g-p2 >/dev/null
: > runs.jsonl
for r in 1 2 3; do
  order=(old new); ((r % 2 == 0)) && order=(new old)
  for mode in vanilla adaqp; do for side in "${order[@]}"; do
    bin=$old; [[ $side == new ]] && bin=$new
    d=r$r-$mode-$side; rm -rf $d
    mpirun --oversubscribe --bind-to none -np 2 $bin train "${job[@]}" --set communication.mode=$mode --set output.dir=$d > $d.log 2>&1
    python3 - $d $r $mode $side >> runs.jsonl <<'PY'
import json,sys,statistics
d,r,mode,side=sys.argv[1:]
recs=[json.loads(l) for l in open(d+'/metrics.jsonl')]
slow={}; rss=0
for x in recs:
    if 'epoch_time_s' in x and not x.get('event'):
        slow[x['epoch']]=max(slow.get(x['epoch'],0),x['epoch_time_s']); rss=max(rss,x['peak_rss_bytes'])
print(json.dumps({'round':int(r),'mode':mode,'side':side,'epochs':[slow[e] for e in sorted(slow)],'epoch_s':statistics.median(slow[e] for e in sorted(slow) if e>=3),'peak_rss_mib':rss/2**20}))
PY
  done; done
done
python3 - <<'PY'
import json,statistics
rows=[json.loads(l) for l in open('runs.jsonl')]
for mode in ('vanilla','adaqp'):
  for side in ('old','new'):
    e=[r['epoch_s'] for r in rows if r['mode']==mode and r['side']==side]; m=[r['peak_rss_mib'] for r in rows if r['mode']==mode and r['side']==side]
    print(f"{mode:8s} {side}: epoch {statistics.median(e):.3f} s [{min(e):.3f}-{max(e):.3f}]  peak RSS {statistics.median(m):.1f} MiB [{min(m):.1f}-{max(m):.1f}]")
PY
