"""Replay how Megatron-LM wires a missing validation split into evaluate().

No Megatron code is imported (megatron.training needs CUDA); the few lines that
matter are replayed with their upstream shapes:

* build_train_valid_test_data_loaders (core_v0.14.0 and later) wraps the
  validation dataset in a list before building loaders:
      valid_ds = [valid_ds] if not isinstance(valid_ds, list) else valid_ds
  so a split of weight 0 (--split 100,0,0) or a missing --valid-data-path
  gives valid_dataloaders == [None], and
      do_valid = valid_dataloaders is not None and (full_validation or eval_iters > 0)
  is True although there is nothing to iterate. Up to core_v0.13.1 the test was
  `valid_dataloader is not None and args.eval_iters > 0`, so eval was skipped.
* build_train_valid_test_data_iterators then sets valid_data_iterator = None.
* evaluate() -> forward_step -> get_batch on tensor-parallel rank 0 reads it:
  core_v0.14.0: `data = None` then data["tokens"] (not subscriptable),
  core_v0.15.0 to core_v0.17.1: `assert data_iterator is not None`,
  core_v0.18.0 and later: `batch = next(data_iterator)` in pretrain_gpt.py.
Each variant prints the Python error it raises; then `--eval-iters 0` is shown
to turn do_valid off. Runs in well under a second on CPU; torch not needed.
"""
import traceback


def build_loader(dataset):
    # build_pretraining_data_loader returns None for a None dataset
    return None if dataset is None else list(dataset)


def build_iterators(valid_ds, eval_iters, full_validation=False, new_wiring=True):
    if new_wiring:
        valid_ds = [valid_ds] if not isinstance(valid_ds, list) else valid_ds
        valid_dataloaders = [build_loader(d) for d in valid_ds]
        do_valid = valid_dataloaders is not None and (full_validation or eval_iters > 0)
        first = valid_dataloaders[0]
    else:
        first = build_loader(valid_ds)
        do_valid = first is not None and eval_iters > 0
    valid_data_iterator = iter(first) if first is not None else None
    return do_valid, valid_data_iterator


def get_batch_core_v0_14(data_iterator):
    if data_iterator is not None:
        data = next(data_iterator)
    else:
        data = None
    return {'tokens': data["tokens"]}


def get_batch_core_v0_15_to_0_17(data_iterator):
    assert data_iterator is not None
    data = next(data_iterator)
    return {'tokens': data["tokens"]}


def get_batch_core_v0_18_plus(data_iterator):
    batch = next(data_iterator)
    return batch


def evaluate(get_batch, data_iterator, eval_iters):
    for _ in range(eval_iters):
        get_batch(data_iterator)


def main():
    valid_ds = None  # what the dataset builder returns for a 0% validation split
    do_valid, it = build_iterators(valid_ds, eval_iters=100, new_wiring=False)
    print(f"core_v0.13.1 wiring: do_valid={do_valid} (evaluation skipped)", flush=True)
    do_valid, it = build_iterators(valid_ds, eval_iters=100)
    print(f"core_v0.14.0+ wiring: do_valid={do_valid} valid_data_iterator={it}", flush=True)
    for name, fn in [("core_v0.14.0", get_batch_core_v0_14),
                     ("core_v0.15.0-0.17.1", get_batch_core_v0_15_to_0_17),
                     ("core_v0.18.0+", get_batch_core_v0_18_plus)]:
        print(f"--- get_batch as in {name}", flush=True)
        try:
            evaluate(fn, it, eval_iters=100)
        except Exception:
            traceback.print_exc()
    do_valid, it = build_iterators(valid_ds, eval_iters=0)
    print(f"fix --eval-iters 0: do_valid={do_valid} (evaluation skipped)", flush=True)
    do_valid, it = build_iterators([{"tokens": [1, 2, 3]}], eval_iters=1)
    evaluate(get_batch_core_v0_18_plus, it, eval_iters=1)
    print(f"fix --split 98,2,0: do_valid={do_valid}, one evaluation batch read", flush=True)


if __name__ == "__main__":
    main()
