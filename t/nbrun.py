#!/usr/bin/python3
"""nbrun.py - run notebooks in a real Jupyter kernel for the bats suites.

    nbrun.py make OUT.ipynb SRC.py     a notebook from a percent-format
                                       file: "# %%" starts each code cell
    nbrun.py run NOTEBOOK [OUT]        execute it with nbclient in the
                                       current directory; exit 1 with the
                                       failing cell's error on stderr
    nbrun.py interrupt SRC.py          run SRC's cells in a kernel; the
                                       cell marked "# %% interrupt" is
                                       interrupted once the file
                                       ./interrupt-now exists, and must
                                       end in KeyboardInterrupt; the
                                       others must succeed
    nbrun.py restart SRC.py            as run, but the cell marked
                                       "# %% restart" is left running and
                                       the kernel restarted once
                                       ./restart-now exists; the cells
                                       after it run in the new kernel;
                                       it says whether ./slow.txt
                                       existed when the kernel went

Run it with Debian's /usr/bin/python3 (python3-nbclient, python3-ipykernel,
python3-nbformat); the kernel is Debian's python3 kernel, which inherits
this environment (PATH, PYTHONPATH, HW_MODEL, HW_BASE_URL ...).
"""

import os
import queue
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

DEADLINE = 120


def cells(src):
    """[(marker, source)] of a percent-format file."""
    out = []
    cur = None
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# %%"):
                cur = [line[4:].strip(), []]
                out.append(cur)
            elif cur is not None:
                cur[1].append(line)
    return [(m, "".join(ls).strip("\n")) for m, ls in out]


def make(out, src):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(s) for _, s in cells(src)]
    nbformat.write(nb, out)


def run(path, out=None):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=DEADLINE, kernel_name="python3",
                            resources={"metadata": {"path": os.getcwd()}})
    # Debian's ipywidgets 6 opens its comms without the "state" that
    # nbclient's stand-in for an Output widget expects; no widget here
    # needs that stand-in
    mimic = client.comm_open_handlers.get("jupyter.widget")

    def widget_open(msg):
        if "state" not in msg["content"].get("data", {}):
            return None
        return mimic(msg)
    if mimic:
        client.comm_open_handlers["jupyter.widget"] = widget_open
    try:
        client.execute()
    except CellExecutionError as e:
        sys.stderr.write("nbrun: %s\n" % e)
        return 1
    finally:
        if out:
            nbformat.write(nb, out)
    return 0


def wait_file(name):
    end = time.monotonic() + DEADLINE
    while not os.path.exists(name):
        if time.monotonic() > end:
            raise SystemExit("nbrun: %s never appeared" % name)
        time.sleep(0.05)


def execute(kc, code, block=True):
    """Run code; return (status, ename, text output) once it finished,
    or its msg_id when block is false."""
    mid = kc.execute(code)
    if not block:
        return mid
    return collect(kc, mid)


def collect(kc, mid):
    text, ename, status = [], None, None
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != mid:
            continue
        t, c = msg["msg_type"], msg["content"]
        if t == "stream":
            text.append(c["text"])
        elif t == "error":
            ename = c["ename"]
            text.append("\n".join(c["traceback"]))
        elif t == "status" and c["execution_state"] == "idle":
            break
    # the reply to this request: one left over from before (the kernel's
    # info reply, when the start did not read it) is not it
    while True:
        reply = kc.get_shell_msg(timeout=DEADLINE)
        if reply["parent_header"].get("msg_id") == mid:
            break
    status = reply["content"]["status"]
    return status, ename, "".join(text)


def kernel():
    from jupyter_client.manager import start_new_kernel
    return start_new_kernel(kernel_name="python3", cwd=os.getcwd())


def fail(why, text):
    sys.stderr.write("nbrun: %s\n%s\n" % (why, text))
    return 1


def interrupt(src):
    km, kc = kernel()
    try:
        for mark, code in cells(src):
            if mark != "interrupt":
                st, en, text = execute(kc, code)
                sys.stdout.write(text)
                if st != "ok":
                    return fail("a cell failed", text)
                continue
            mid = execute(kc, code, block=False)
            wait_file("interrupt-now")
            time.sleep(0.3)
            km.interrupt_kernel()
            st, en, text = collect(kc, mid)
            sys.stdout.write(text)
            if en != "KeyboardInterrupt":
                return fail("the interrupted cell ended %s/%s" % (st, en),
                            text)
            print("nbrun: interrupted")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return 0


def restart(src):
    km, kc = kernel()
    try:
        for mark, code in cells(src):
            if mark != "restart":
                st, en, text = execute(kc, code)
                sys.stdout.write(text)
                if st != "ok":
                    return fail("a cell failed", text)
                continue
            execute(kc, code, block=False)
            wait_file("restart-now")
            # what the agent has done by the time the kernel goes
            done = os.path.exists("slow.txt")
            kc.stop_channels()
            km.restart_kernel(now=True)
            print("nbrun: slow.txt before the restart: %s" % done)
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=DEADLINE)
            print("nbrun: restarted")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "make":
        make(argv[2], argv[3])
        return 0
    if len(argv) in (3, 4) and argv[1] == "run":
        return run(argv[2], argv[3] if len(argv) == 4 else None)
    if len(argv) == 3 and argv[1] == "interrupt":
        return interrupt(argv[2])
    if len(argv) == 3 and argv[1] == "restart":
        return restart(argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
