#!/usr/bin/env python3
"""Peer for comparison 1: download every URL with asyncio + aiohttp (8 at a time) and verify it with Pillow
(full decode). Usage: peer_asyncio_pillow.py URLS_FILE OUT_DIR"""
import asyncio
import io
import os
import sys

import aiohttp
from PIL import Image


async def main(urls, out):
    semaphore = asyncio.Semaphore(8)
    failures = 0

    async def fetch(session, index, url):
        nonlocal failures
        async with semaphore:
            try:
                async with session.get(url) as response:
                    body = await response.read()
                    if response.status != 200:
                        failures += 1
                        return
            except aiohttp.ClientError:
                failures += 1
                return
        try:
            with Image.open(io.BytesIO(body)) as image:
                image.load()  # full decode
            with open(os.path.join(out, str(index)), "wb") as file:
                file.write(body)
        except Exception:
            failures += 1

    connector = aiohttp.TCPConnector(limit=8)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(fetch(session, index, url) for index, url in enumerate(urls)))
    print(f"{len(urls) - failures} ok, {failures} failed", file=sys.stderr)


urls = [line.strip() for line in open(sys.argv[1]) if line.strip()]
os.makedirs(sys.argv[2], exist_ok=True)
asyncio.run(main(urls, sys.argv[2]))
