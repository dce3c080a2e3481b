"""Resume checkpoints of the training loops (vit-probe, cot-dp, jackson.fit): written by `save_atomic`, read by
`load_checkpoint` (which checks that a checkpoint belongs to the run; `differs` names what does not match) and,
when unusable, renamed aside by `set_aside`, never deleted.  A checkpoint also records the devices its steps
ran on (`add_steps`, `saved_devices`, `devices_label`), so a run stopped on one machine and resumed on another
names both.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path


def save_atomic(path: str | os.PathLike, state) -> None:
    """torch.save `state` to `path` through a temporary file and a rename: a resume checkpoint is the
    previous complete one or the new complete one, whenever the process is stopped (the temporary file
    is removed when the save itself raises, a signal's KeyboardInterrupt included)."""
    import torch
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def add_steps(devices: list[dict], device: str | None, n: int) -> list[dict]:
    """A run's device record ({"device", "steps"} in order; device None: not recorded) with n more steps on
    `device`, merged into the last entry when it is the same device.  Resume checkpoints carry it, so that a
    run stopped on one machine and resumed on another names both."""
    if n <= 0:
        return devices
    if devices and devices[-1]["device"] == device:
        return devices[:-1] + [{"device": device, "steps": devices[-1]["steps"] + n}]
    return devices + [{"device": device, "steps": n}]


def saved_devices(state: dict, step: int) -> list[dict]:
    """The device record of a resume checkpoint holding `step` steps; one written before records were kept:
    all its steps on a device not recorded.  ValueError when malformed (the checkpoint is then set aside)."""
    devs = state.get("devices", [{"device": None, "steps": step}])

    def one(d) -> bool:
        return (isinstance(d, dict) and type(d.get("steps")) is int and d["steps"] >= 0
                and (d.get("device") is None or isinstance(d.get("device"), str)))
    if not (isinstance(devs, list) and all(map(one, devs)) and sum(d["steps"] for d in devs) == step):
        raise ValueError("malformed device record")
    return [{"device": d["device"], "steps": d["steps"]} for d in devs if d["steps"] > 0]


def devices_label(devices: list[dict]) -> str:
    """The devices of a device record in order of first use, joined by '+' ("cpu"; "cuda+cpu" for a run
    started on a GPU and resumed on a CPU).  Steps on a device not recorded are not named ("" if none is)."""
    return "+".join(dict.fromkeys(d["device"] for d in devices if d["device"] is not None))


def differs(a: dict, b: dict) -> list[str]:
    """The dotted names of the entries in which two nested dicts differ (a checkpoint's run identity
    against this run's: the one line that says why a checkpoint is set aside names them)."""
    out = []
    for k in sorted(set(a) | set(b)):
        if isinstance(a.get(k), dict) and isinstance(b.get(k), dict):
            out += [f"{k}.{x}" for x in differs(a[k], b[k])]
        elif a.get(k) != b.get(k):
            out.append(k)
    return out


def load_checkpoint(path: str | os.PathLike, run: dict | None, what: str, keep: list, read,
                    map_location="cpu") -> dict:
    """torch.load a resume checkpoint, check that it is one of `what` and belongs to `run` (its "run" entry;
    None: `read` checks what identity the file has), and return `read(state)`, which loads into the modules and
    optimisers of `keep` and returns the rest.  On any failure (truncated file, zero bytes, garbage, missing
    keys, wrong shapes, another run) every object in `keep` is put back as it was (a failed strict load may have copied some tensors) and {"error": why} is
    returned: the reason `set_aside` prints."""
    import torch
    before = [(o, {k: v.clone() for k, v in o.state_dict().items()} if isinstance(o, torch.nn.Module)
               else o.state_dict()) for o in keep]
    try:
        st = load_weights_only(path, map_location)
        if not isinstance(st, dict) or (run is not None and "run" not in st):
            raise ValueError(f"not a {what} checkpoint")
        if run is not None and st["run"] != run:
            raise ValueError(f"it belongs to another run (differs in {', '.join(differs(st['run'], run))})")
        return read(st)
    except Exception as e:
        for o, state in before:
            o.load_state_dict(state)
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}


def set_aside(path: str | os.PathLike, why: str, desc: str) -> Path:
    """Rename an unusable checkpoint to <name>.corrupt-<UTC time> (never delete it); one line on stderr."""
    import time
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    k = 1
    while dest.exists():
        dest, k = path.with_name(f"{path.name}.corrupt-{stamp}-{k}"), k + 1
    os.replace(path, dest)
    print(f"{desc}: cannot resume from {path} ({why}); set aside as {dest.name}, training from scratch",
          file=sys.stderr, flush=True)
    return dest


def load_weights_only(path, map_location="cpu"):
    """torch.load(path, weights_only=True) -- no code runs -- with torch's warnings kept off the terminal: a file it
    cannot read (a bare pickle, another protocol's) is refused by its caller in one line, and torch's own
    two-line UserWarning before that line says nothing the refusal does not."""
    import stat
    import warnings

    import torch
    if not stat.S_ISREG(os.stat(path).st_mode):        # a FIFO's open would wait for a writer: never opened
        raise ValueError(f"{path} is not a regular file")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(path, map_location=map_location, weights_only=True)
