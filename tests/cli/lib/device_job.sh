# shellcheck shell=bash disable=SC2034
# The job tests/cli/gpu_train.sh trains on the CPU and on CUDA, and the tolerance it compares runs
# with that differ only in floating-point summation order (CPU against CUDA, CUDA at W=1 against
# W=2 and 4): per-epoch losses over all 30 epochs and the final parameters, relative.
# tests/cli/device_tolerance.sh checks on the CPU that this tolerance has margin on both sides: runs
# of this job at W=1, 2, 4 (other partitions, other summation orders) agree 100x more closely, and
# a run that loses every halo row (adaqp_zero_halo) differs by more than 10x as much.
device_job=(--set dataset.format=synthetic --set dataset.synthetic.num_nodes=3000
            --set dataset.synthetic.feat_dim=48 --set dataset.synthetic.seed=5
            --set dataset.self_loops=true --set model.layers=3 --set model.hidden=32
            --set communication.mode=vanilla)
# ... and how long it trains (Cora's runs too).
device_training=(--set training.epochs=30 --set training.seed=11 --set model.dropout=0.5)
export DEVICE_TOL=1e-3
