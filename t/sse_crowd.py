"""sse_crowd.py HOST:PORT PATH N [--no-read] - open N event-stream
connections to PATH and keep them open until stdin closes.  Prints
"open N" once each has its response headers (or, with --no-read, once
each request is sent: those never read another byte)."""
import resource, socket, sys

host, port = sys.argv[1].rsplit(":", 1)
path, n = sys.argv[2], int(sys.argv[3])
no_read = "--no-read" in sys.argv
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 64)), hard))
socks = []
for i in range(n):
    s = socket.create_connection((host, int(port)), timeout=30)
    if no_read:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, sys.argv[1])).encode())
    socks.append(s)
if not no_read:
    for s in socks:
        got = b""
        while b"\r\n\r\n" not in got:
            k = s.recv(4096)
            if not k:
                sys.exit("a stream closed early")
            got += k
        if not got.startswith(b"HTTP/1.1 200"):
            sys.exit("a stream was refused: %r" % got[:80])
print("open %d" % n, flush=True)
sys.stdin.read()
