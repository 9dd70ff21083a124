#!/usr/bin/env bash
# The measurements that wait for an NVIDIA GPU, in three parts that each fit one
# 10-minute device call. Every step has its own time limit, writes its output
# to OUT/<step>.txt (and OUT/<step>.json where the script can), and a step that
# fails or runs out of time does not stop the next one.
#
#   bash bench/h200_pending.sh optimizing OUT   # scan, public chain, bounds, kernel variants, bundles
#   bash bench/h200_pending.sh runtime OUT      # small runs, maps, waits, repeated runs
#   bash bench/h200_pending.sh workloads OUT    # the workload table with the public chain
#   bash bench/h200_pending.sh targets OUT      # the open targets first (public chain, tree,
#                                               # scan, chain kernel variants, small runs, waits)
#   bash bench/h200_pending.sh scan OUT         # the scan's kernels against hand-written forms
#   bash bench/h200_pending.sh submissions OUT  # the public chain's submissions and work bounds
#   bash bench/h200_pending.sh open OUT         # submissions, then the public chain, tree and scan
#                                               # (profiled and back to back), and trap-record waits
#   bash bench/h200_pending.sh leads OUT        # what already leads (neighbour, stencil, histogram,
#                                               # chain4), and the scan's add-back against hand-written forms
#   bash bench/h200_pending.sh products OUT     # the naive gemm and PolyBench's CUDA gemm and syrk, tiled
#
# On a machine without the Vulkan loader or the Python packages, it first
# unpacks .gl/*.deb and installs .whl/*.whl (docs/performance.md, "Measuring on
# a GPU machine") when those folders exist. It refuses to time anything unless
# the adapter is an NVIDIA GPU via Vulkan (not llvmpipe).
set -u
part=${1:?usage: h200_pending.sh optimizing|runtime|workloads|targets|scan|submissions|open|leads|products OUT}
out=${2:?usage: h200_pending.sh optimizing|runtime|workloads|targets|scan|submissions|open|leads|products OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

if [ -d "$root/.gl" ] && ! ldconfig -p | grep -q libvulkan.so.1; then
    for deb in "$root"/.gl/*.deb; do dpkg -x "$deb" /; done
    ldconfig
fi
if [ -d "$root/.whl" ] && [ ! -d /tmp/site/wgpu ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$root"/.whl/*.whl
fi
if [ -d /tmp/site ]; then
    export PYTHONPATH=/tmp/site:$root
else
    export PYTHONPATH=$root
fi
export WGPU_BACKEND_TYPE=Vulkan PYTHONUNBUFFERED=1 VYRE_CACHE_DIR=off
cd "$root/bench"

{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/machine.txt" 2>&1
python3 - > "$out/adapter.txt" 2>&1 <<'EOF'
import wgpu
adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
print(adapter.summary)
EOF
if ! grep -q "NVIDIA.*Vulkan" "$out/adapter.txt"; then
    echo "not an NVIDIA adapter via Vulkan:" && cat "$out/adapter.txt"
    exit 1
fi
cat "$out/machine.txt" "$out/adapter.txt"

step() {  # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    echo "== $name: $*"
    timeout "$limit" "$@" > "$out/$name.txt" 2>&1
    local status=$?
    echo "== $name: exit $status after $((SECONDS - start)) s"
    tail -n 25 "$out/$name.txt"
}

case $part in
optimizing)
    step scan 150 python3 coarsen_reductions.py --kinds scan --log2n 28 --reps 9 --warmup 3 \
        --json "$out/scan.json"
    step bounds 150 python3 submission_bounds.py --rounds 9 --chain-log2n 28 --json "$out/bounds.json"
    step chain_variants 120 python3 chain_kernel_variants.py --log2n 28 --rounds 9 --warmup 2 \
        --wgsl stage_selects=kernels/chain8_2p28_stage_selects.wgsl --json "$out/chain_variants.json"
    step megakernel_trees 90 python3 megakernel_trees.py --log2n 26 --reps 9 \
        --json "$out/megakernel_trees.json"
    ;;
runtime)
    step small_runs 150 python3 small_runs.py --parts small --batches 7 --json "$out/small_runs.json"
    step readback_maps 90 python3 readback_maps.py --rounds 9 --json "$out/readback_maps.json"
    step sync_wait 90 python3 sync_wait.py --rounds 9 --spins 0 50e-6 200e-6 1e-3 \
        --json "$out/sync_wait.json"
    step repeated_runs 120 python3 repeated_runs.py --rounds 4 --json "$out/repeated_runs.json"
    ;;
workloads)
    step workloads 500 python3 workloads.py --log2n 28 --hist-log2n 26 --reps 7 --chain-public \
        --json "$out/workloads.json"
    ;;
targets)
    step chain_tree 200 python3 workloads.py --workloads chain8 sum_tree --log2n 28 --reps 7 --coarsen-reductions \
        --chain-public --json "$out/chain_tree.json"
    step scan 110 python3 coarsen_reductions.py --kinds scan --log2n 28 --reps 9 --warmup 3 \
        --json "$out/scan.json"
    step chain_variants 90 python3 chain_kernel_variants.py --log2n 28 --rounds 7 --warmup 1 \
        --wgsl stage_selects=kernels/chain8_2p28_stage_selects.wgsl --json "$out/chain_variants.json"
    step small_runs 120 python3 small_runs.py --parts small --batches 7 --json "$out/small_runs.json"
    step sync_wait 60 python3 sync_wait.py --rounds 7 --spins 0 50e-6 200e-6 \
        --json "$out/sync_wait.json"
    ;;
scan)
    step scan_variants 240 python3 scan_kernel_variants.py --log2n 28 --rounds 9 --warmup 1 \
        --json "$out/scan_variants.json"
    step scan 110 python3 coarsen_reductions.py --kinds scan --log2n 28 --reps 9 --warmup 3 \
        --json "$out/scan.json"
    step scan_workload 200 python3 workloads.py --workloads scan --log2n 28 --reps 9 \
        --coarsen-reductions --json "$out/scan_workload.json"
    ;;
submissions)
    step submissions 200 python3 chain_submissions.py --log2n 28 --rounds 9 --warmup 1 \
        --json "$out/submissions.json"
    ;;
open)
    step submissions 150 python3 chain_submissions.py --log2n 28 --rounds 9 --warmup 1 \
        --json "$out/submissions.json"
    step chain_tree 200 python3 workloads.py --workloads chain8 sum_tree --log2n 28 --reps 7 \
        --coarsen-reductions --chain-public --json "$out/chain_tree.json"
    step scan_workload 150 python3 workloads.py --workloads scan --log2n 28 --reps 9 \
        --coarsen-reductions --back-to-back --json "$out/scan_workload.json"
    step trap_checks 60 python3 trap_checks.py --log2n 28 --reps 7 --json "$out/trap_checks.json"
    ;;
leads)
    step leads 300 python3 workloads.py --workloads neighbour stencil3 hist_naive chain4 --log2n 28 \
        --hist-log2n 26 --reps 7 --json "$out/leads.json"
    step scan_addback 150 python3 scan_kernel_variants.py --log2n 28 --rounds 7 --warmup 1 \
        --only a_gen a_pass_sg a_sg_v4 a_sg_staged copy --json "$out/scan_addback.json"
    ;;
products)
    step gemm 150 python3 workloads.py --workloads gemm --gemm-sizes 2048 4096 --reps 7 \
        --json "$out/gemm.json"
    step polybench 200 python3 polybench_products.py --sizes 2048 4096 --reps 7 \
        --kinds gemm gemm_zero syrk --json "$out/polybench.json"
    # sizes that the 128 x 128 tiles overhang (outputs past the edge, guards read)
    step overhang 120 python3 polybench_products.py --sizes 2000 4000 --reps 7 \
        --kinds gemm syrk --json "$out/polybench_overhang.json"
    ;;
*)
    echo "unknown part $part (optimizing, runtime, workloads, targets, scan, submissions, open, leads or products)"
    exit 2
    ;;
esac
