"""prefix_proxy.py PREFIX BACKEND-FILE - a small stand-in for Jupyter's
server proxy: it listens on a free loopback port (printed as one line,
"PORT"), takes each request for PREFIX/..., forwards it to the backend
named in BACKEND-FILE (HOST:PORT, read at each connection) with the
prefix taken off and the context headers Jupyter adds, and then copies
bytes both ways, so event streams and WebSocket upgrades pass through.
A request outside PREFIX is answered 404 by the proxy itself."""
import asyncio, sys

PREFIX, BACKEND = sys.argv[1], sys.argv[2]


async def pipe(r, w):
    try:
        while True:
            b = await r.read(65536)
            if not b:
                break
            w.write(b)
            await w.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            w.close()
        except Exception:
            pass


async def handle(cr, cw):
    head = await cr.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    if not (target == PREFIX or target.startswith(PREFIX + "/")):
        cw.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        await cw.drain()
        cw.close()
        return
    target = target[len(PREFIX):] or "/"
    peer = cw.get_extra_info("peername")[0]
    out = ["%s %s %s" % (method, target, version)] + [l for l in lines[1:] if l]
    out += ["X-Forwarded-Prefix: " + PREFIX, "X-Forwarded-Context: " + PREFIX,
            "X-ProxyContextPath: " + PREFIX, "X-Forwarded-For: " + peer]
    host, port = open(BACKEND).read().strip().rsplit(":", 1)
    br, bw = await asyncio.open_connection(host, int(port))
    bw.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
    await bw.drain()
    await asyncio.gather(pipe(cr, bw), pipe(br, cw))


async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(srv.sockets[0].getsockname()[1], flush=True)
    async with srv:
        await srv.serve_forever()

asyncio.run(main())
