"""ws_client.py URL PATH ORIGIN COUNT - connect with Python's websockets
(Debian python3-websockets), print each text frame on its own line until
the frames hold events through sequence COUNT-1, then close."""
import asyncio, json, sys

import websockets


async def main(url, path, origin, count):
    ws_url = url.replace("http://", "ws://").rstrip("/") + path
    async with websockets.connect(ws_url, origin=origin,
                                  max_size=1 << 24) as ws:
        last = -1
        while last < count - 1:
            m = await asyncio.wait_for(ws.recv(), 30)
            print(m, flush=True)
            for e in json.loads(m)["events"]:
                last = e["sequence"]

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] or None,
                 int(sys.argv[4])))
