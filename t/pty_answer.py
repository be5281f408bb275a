import os, pty, sys, time, select
# pty_answer.py ANSWER... -- CMD...: run CMD on a terminal and answer each
# prompt (output ending in ": ") with the next ANSWER, "EOF" sending ^D.
# Prints what the terminal showed and exits with the status of CMD.
i = sys.argv.index('--')
answers, cmd = sys.argv[1:i], sys.argv[i + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
out = b''

def more(deadline):
    global out
    r, _, _ = select.select([fd], [], [], max(0, deadline - time.time()))
    if not r:
        return False
    try:
        d = os.read(fd, 4096)
    except OSError:
        d = b''
    out += d
    return bool(d)

for a in answers:
    seen, deadline = len(out), time.time() + 10
    while not (len(out) > seen and out.endswith(b': ')) and time.time() < deadline:
        if not more(deadline):
            break
    os.write(fd, b'\x04' if a == 'EOF' else a.encode() + b'\n')
deadline = time.time() + 10
while time.time() < deadline and more(deadline):
    pass
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace').replace('\r\n', '\n'))
sys.exit(os.waitstatus_to_exitcode(st))
