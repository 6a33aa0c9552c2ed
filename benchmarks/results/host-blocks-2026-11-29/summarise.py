import json,glob,statistics as st,sys,collections
base=sys.argv[1] if len(sys.argv)>1 else '/work/prof/hb'
res=collections.defaultdict(list)
for d in sorted(glob.glob(base+'/w*-*-*')):
    if d.endswith('.time'): continue
    name=d.split('/')[-1]; w,v,r=name.split('-')
    try: rows=[json.loads(l) for l in open(d+'/metrics.jsonl')]
    except FileNotFoundError: continue
    ep=collections.defaultdict(float)
    for x in rows:
        if 'epoch_time_s' in x and x['epoch']>=3: ep[x['epoch']]=max(ep[x['epoch']],x['epoch_time_s'])
    s=[x for x in rows if x.get('event')=='summary']
    if not s: continue
    mem=s[0]['memory']; tr=max(p[3] for p in mem['peak_rss_bytes'])/2**20
    res[(w,v)].append((r,st.mean(ep.values()),tr))
for k in sorted(res):
    v=res[k]; t=[x[1] for x in v]; m=[x[2] for x in v]
    print(k, 'epoch', ' '.join(f'{x:.2f}' for x in t), 'median', f'{st.median(t):.2f}', '| peak MiB', ' '.join(f'{x:.0f}' for x in m))
