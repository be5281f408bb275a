"""http_raw.py HOST:PORT [--slow SECONDS] - send stdin as one raw HTTP
request (nothing rewritten) and print the response's status code, a
space and its body; --slow sends it one byte at a time, that many seconds
apart."""
import socket, sys, time

host, port = sys.argv[1].rsplit(":", 1)
slow = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--slow" else 0
data = sys.stdin.buffer.read()
s = socket.create_connection((host, int(port)), timeout=30)
if slow:
    for b in data:
        s.sendall(bytes([b]))
        time.sleep(slow)
else:
    s.sendall(data)
got = b""
while True:
    try:
        k = s.recv(65536)
    except (ConnectionResetError, socket.timeout):
        break
    if not k:
        break
    got += k
    head, sep, body = got.partition(b"\r\n\r\n")
    if sep:
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and \
                    len(body) >= int(value):
                break
        else:
            continue
        break
head, _, body = got.partition(b"\r\n\r\n")
status = head.split(b" ")[1].decode() if head else "000"
sys.stdout.write(status + " " + body.decode("utf-8", "replace"))
