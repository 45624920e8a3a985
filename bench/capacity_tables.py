#!/usr/bin/env python3
# capacity_tables.py - the ratios of SUITE=capacity scripts/bench.sh (docs/BENCHMARKS.md,
# "Capacity accounting"): python3 bench/capacity_tables.py <base>, where <base>.json is
# kura-bench's and <base>-http-{on,off,throttle}-r{1,2,3}.json kura-http-bench's.
import json,glob,statistics,sys
base=sys.argv[1]
d=json.load(open(base+'.json'))
by={}
for r in d['results']:
    by[(r['engine'],r['workload'])]=[x['ops_per_sec'] for x in r['runs']]
for wl in ['putitem','getitem']:
    on=by[('kura-capi',wl)]; off=by[('kura-capi-noacct',wl)]; th=by[('kura-capi-throttle',wl)]
    ra=[a/b for a,b in zip(on,off)]; rt=[a/b for a,b in zip(th,off)]
    print(wl,'C API acct/off rounds',['%.2f'%x for x in ra],'median %.2f'%statistics.median(ra),
          '| throttle/off',['%.2f'%x for x in rt],'median %.2f'%statistics.median(rt),
          '| medians ops/s on %d off %d thr %d'%(statistics.median(on),statistics.median(off),statistics.median(th)))
http={}
for v in ['on','off','throttle']:
    for r in (1,2,3):
        h=json.load(open('%s-http-%s-r%d.json'%(base,v,r)))
        for x in h['results']:
            if x['workload'] in ('put','get'):
                http.setdefault((v,x['workload'],x['connections']),[]).append((x['req_per_sec'],x['errors']))
for wl in ['put','get']:
    for c in (1,32):
        on=[a for a,_ in http[('on',wl,c)]]; off=[a for a,_ in http[('off',wl,c)]]; th=[a for a,_ in http[('throttle',wl,c)]]
        errs=sum(e for _,e in http[('throttle',wl,c)])
        ra=[a/b for a,b in zip(on,off)]; rt=[a/b for a,b in zip(th,off)]
        print('HTTP',wl,c,'acct/off',['%.2f'%x for x in ra],'median %.2f'%statistics.median(ra),'| thr/off',['%.2f'%x for x in rt],'median %.2f'%statistics.median(rt),'| off median %d req/s, throttle errors %d'%(statistics.median(off),errs))
