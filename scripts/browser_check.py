#!/usr/bin/env python3
"""Checks the web front end in a real headless Chromium, driven over the DevTools protocol.

Starts the built-in origin and `tilecache serve` on free loopback ports, loads the page, and asserts from the rendered
DOM that: while DevTools holds every thumbnail request back, each of the 118 tiles shows its placeholder (the element
API's LQIP over its colour); all 118 tiles show a loaded thumbnail; the detail view of iron shows its photo and fields;
cesium's photo (the photo host spells it caesium) loads; thorium's detail view shows the placeholder; the page's ★ button toggles a
favourite (POST, then DELETE by id) as the API sees it; the Favourites view follows the name as it is typed and removes
a favourite; the list view sorts; at phone width (390 px) every column of the table can be scrolled into view; a page
on another origin cannot store a favourite, with or without a preflight; on a service with --write-token, the ★ asks
for the token and saves once it is typed in the page; on a service with --client-hints, at 2x, Chromium's own hints
size an image whose URL gives no width, and an <img> written from /srcset picks the candidate a 2x screen needs.
Saves a screenshot of each view (desktop and phone width) to the output folder.

Usage: scripts/browser_check.py TILECACHE_BINARY OUTPUT_DIR
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import websocket  # websocket-client, installed by scripts/browser-check.sh

binary, output = sys.argv[1], sys.argv[2]
os.makedirs(output, exist_ok=True)
work = tempfile.mkdtemp(prefix="tilecache-browser-")
processes = []


def start(arguments, pattern):
    """Starts a process and returns the first match of `pattern` in its stdout (it prints its URL when ready)."""
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    processes.append(process)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise SystemExit(f"browser check: {arguments[0]} exited early ({process.returncode})")
        match = re.search(pattern, line or "")
        if match:
            return match.group(1)
    raise SystemExit(f"browser check: {' '.join(arguments)} did not start")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise SystemExit("browser check: chromium is not installed (scripts/browser-check.sh installs it)")


class Page:
    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"browser check: {method} failed: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise SystemExit(f"browser check: page error in {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what, seconds=45):
        deadline = time.time() + seconds
        value = None
        while time.time() < deadline:
            try:
                value = self.evaluate(expression)
            except SystemExit as error:
                # A page being replaced (a reload) has no context to evaluate in for a moment: ask again.
                if "context" not in str(error).lower():
                    raise
                value = None
            if value is True:
                return
            time.sleep(0.2)
        raise SystemExit(f"browser check FAILED: {what} (last value: {value!r})")

    def screenshot(self, name):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path = os.path.join(output, name)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        print(f"browser check: screenshot {path}")

    def viewport(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)


try:
    tiles = start([binary, "origin", "--port", "0", "--latency-ms", "5"], r"--tiles-base (\S+)")
    images = tiles.replace("/periodictable", "/images-of-elements")
    service = start([binary, "serve", "--port", "0", "--cache-dir", os.path.join(work, "cache"),
                     "--db", os.path.join(work, "favorites.sqlite"), "--tiles-base", tiles, "--images-base", images],
                    r"serving on (\S+)")
    browser = subprocess.Popen([chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                f"--user-data-dir={os.path.join(work, 'profile')}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(browser)
    devtools = None
    deadline = time.time() + 60
    while devtools is None and time.time() < deadline:
        match = re.search(r"DevTools listening on (ws://\S+)", browser.stderr.readline())
        devtools = match.group(1) if match else None
    if devtools is None:
        raise SystemExit("browser check: chromium did not start")
    http_base = "http://" + devtools.split("/")[2]
    targets = json.load(urllib.request.urlopen(http_base + "/json/list"))
    page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
    page.call("Page.enable")
    page.call("Runtime.enable")
    page.viewport(1400, 900)

    # 0. On a connection where the thumbnails have not arrived (DevTools holds every thumbnail request back), every
    # tile shows its placeholder: the element API's thumbnail_lqip over thumbnail_color, painted behind the image.
    # The service makes the placeholders as it loads the thumbnails; a cold list waits 3 s at most for them and sends
    # null for the rest. Wait (polled, with a deadline) until the element API has all 118, then load the page.
    deadline = time.time() + 90
    while True:
        records = [record for path in ("/api/v1/elements", "/api/v1/elements_remaining")
                   for record in json.load(urllib.request.urlopen(service + path))]
        if len(records) == 118 and all(record.get("thumbnail_lqip") for record in records):
            break
        if time.time() > deadline:
            raise SystemExit("browser check FAILED: the element API did not carry all 118 thumbnails' placeholders within 90 s")
        time.sleep(0.5)
    page.call("Fetch.enable", patterns=[{"urlPattern": "*/thumbnail"}])
    page.call("Page.navigate", url=service + "/#/table")
    page.wait_for("document.querySelectorAll('.table .tile').length === 118", "118 tiles rendered while thumbnails are held back")
    page.wait_for("[...document.querySelectorAll('.table .tile img')].filter(i => i.dataset.loaded === 'pending' && "
                  "i.dataset.placeholder === 'true' && getComputedStyle(i).backgroundImage.startsWith('url(\"data:image/webp')"
                  ").length === 118", "every tile shows its placeholder before its thumbnail arrives")
    page.screenshot("table-placeholders.png")
    page.call("Fetch.disable")  # the held requests go on

    # 1. The periodic table: 118 tiles, each with a loaded thumbnail.
    page.call("Page.navigate", url=service + "/#/table")
    page.wait_for("document.querySelectorAll('.table .tile').length === 118", "118 tiles rendered")
    page.wait_for("document.querySelectorAll('.table .tile img[data-loaded=\"true\"]').length === 118",
                  "all 118 thumbnails loaded")
    page.screenshot("table.png")

    # 2. The list, sorted by name, two lines per row.
    page.evaluate("location.hash = '#/list/name'")
    page.wait_for("document.querySelectorAll('.list li').length === 118 && "
                  "document.querySelector('.list li strong').textContent === 'Actinium'", "list sorted by name")
    page.wait_for("[...document.querySelectorAll('.list li')].some(li => li.textContent.includes('Na(11) 22.989769282'))",
                  "list rows read like 'Na(11) 22.989769282'")
    page.screenshot("list.png")

    # 3. Detail view of iron: title, loaded photo, fields.
    page.evaluate("document.getElementById('who').value = 'Browser Check';"
                  "document.getElementById('who').dispatchEvent(new Event('change'))")
    page.evaluate("location.hash = '#/element/26'")
    page.wait_for("document.getElementById('detail-title')?.textContent === 'Iron'", "detail view titled Iron")
    page.wait_for("document.querySelector('img.photo')?.dataset.loaded === 'true'", "iron's photo loaded")
    page.wait_for("document.querySelector('[data-field=\"atomic-weight\"]').textContent === '55.8452' && "
                  "document.querySelector('[data-field=\"melting-point\"]').textContent === '1811 K' && "
                  "document.querySelector('[data-field=\"discovered-by\"]').textContent === '5000 BC'", "iron's fields")
    page.screenshot("detail.png")

    # 4. The ★ button toggles a favourite: POST, then DELETE by id; the API agrees at each step.
    def api_favorites(person):
        query = urllib.parse.urlencode({"favoritedBy": person})
        return json.load(urllib.request.urlopen(f"{service}/api/v1/favorites?{query}"))

    page.wait_for("document.getElementById('favorite')?.dataset.state === 'off'", "iron is not yet a favourite")
    page.evaluate("document.getElementById('favorite').click()")
    page.wait_for("document.getElementById('favorite-status').dataset.result === 'saved' && "
                  "document.getElementById('favorite')?.dataset.state === 'on'", "favourite saved, button on")
    favorites = api_favorites("Browser Check")
    if [(f["elementSymbol"], f["elementName"], f["number"]) for f in favorites] != [("Fe", "Iron", 26)]:
        raise SystemExit(f"browser check FAILED: after one press the API should hold iron once: {favorites}")
    page.screenshot("detail-favourite.png")
    page.evaluate("document.getElementById('favorite').click()")
    page.wait_for("document.getElementById('favorite-status').dataset.result === 'removed' && "
                  "document.getElementById('favorite')?.dataset.state === 'off'", "favourite removed, button off")
    if api_favorites("Browser Check"):
        raise SystemExit("browser check FAILED: the second press did not delete the favourite")
    page.evaluate("document.getElementById('favorite').click()")
    page.wait_for("document.getElementById('favorite')?.dataset.state === 'on'", "favourite saved again")
    # A fresh page reads the state from the API. The reload is asynchronous: the old page (marked) is waited out first,
    # so the checks below never pass on it, nor fail on the moment between the two pages.
    page.evaluate("window.beforeReload = true; location.reload()")
    page.wait_for("window.beforeReload === undefined && document.readyState === 'complete'", "the page reloaded")
    page.wait_for("document.getElementById('detail-title')?.textContent === 'Iron'", "iron's view after a reload")
    page.wait_for("document.getElementById('favorite')?.dataset.state === 'on'", "a new view shows the saved state")
    if len(api_favorites("Browser Check")) != 1:
        raise SystemExit("browser check FAILED: one favourite per person and element")

    # The Favourites view follows the name as it is typed, and removes a favourite.
    page.evaluate("location.hash = '#/favorites'")
    page.wait_for("document.querySelector('#favorites li[data-symbol=\"Fe\"]') !== null", "favourites view lists iron")
    page.screenshot("favorites.png")
    type_name = ("(name => { const who = document.getElementById('who'); who.value = name;"
                 " who.dispatchEvent(new Event('input')); })")
    page.evaluate(f"{type_name}('Someone Else')")
    page.wait_for("document.querySelector('main h2')?.textContent === 'Favourites of Someone Else' && "
                  "document.getElementById('favorites') === null", "the view follows a new name without a reload")
    page.evaluate(f"{type_name}('Browser Check')")
    page.wait_for("document.querySelector('#favorites li[data-symbol=\"Fe\"]') !== null", "back to the first name's list")
    page.evaluate("document.querySelector('#favorites li[data-symbol=\"Fe\"] button.remove').click()")
    page.wait_for("document.getElementById('favorites') === null && "
                  "document.querySelector('main .status')?.textContent.startsWith('No favourites yet')", "removed in the view")
    if api_favorites("Browser Check"):
        raise SystemExit("browser check FAILED: the view's Remove did not delete the favourite")

    # Cesium: the photo host names the file caesium.jpg; the page shows the photo, not a broken image.
    page.evaluate("location.hash = '#/element/55'")
    page.wait_for("document.querySelector('img.photo')?.dataset.loaded === 'true'", "cesium's photo loaded")

    # 5. An element without a photo shows a clear placeholder.
    page.evaluate("location.hash = '#/element/90'")
    page.wait_for("document.querySelector('.photo.placeholder')?.textContent.includes('No photo')", "thorium's placeholder")
    page.screenshot("detail-no-photo.png")

    # 6. Phone-sized screen: every column of the table can be scrolled into view; detail and list views fit.
    page.viewport(390, 844, mobile=True)
    page.evaluate("location.hash = '#/table'")
    page.wait_for("document.querySelectorAll('.table .tile img[data-loaded=\"true\"]').length === 118", "table on a phone")
    page.wait_for("document.documentElement.scrollWidth <= window.innerWidth", "the page itself does not scroll sideways")
    page.screenshot("phone-table.png")
    for number in (1, 2, 57, 71):  # columns 1 and 18, and the ends of the lanthanide row
        page.evaluate(f"document.querySelector('.table .tile[data-number=\"{number}\"]').scrollIntoView({{inline: 'center', block: 'center'}})")
        page.wait_for(f"(r => r.left >= 0 && r.right <= window.innerWidth)(document.querySelector('.table .tile[data-number=\"{number}\"]').getBoundingClientRect())",
                      f"element {number}'s tile can be scrolled into view on a phone")
    page.screenshot("phone-table-scrolled.png")
    page.evaluate("location.hash = '#/element/79'")
    page.wait_for("document.querySelector('img.photo')?.dataset.loaded === 'true'", "gold's photo loaded on a phone")
    page.wait_for("document.documentElement.scrollWidth <= window.innerWidth", "the detail view fits a phone's width")
    page.screenshot("phone-detail.png")
    page.evaluate("location.hash = '#/list/number'")
    page.wait_for("document.querySelectorAll('.list li').length === 118", "list on a phone")
    page.wait_for("document.documentElement.scrollWidth <= window.innerWidth", "the list fits a phone's width")
    page.screenshot("phone-list.png")

    # 7. A page on another origin (another port) tries to write: the requests a page may send with no preflight
    #    (no-cors fetch with a text/plain, form or multipart body), a JSON fetch, which needs a preflight, and a DELETE.
    #    None may store anything: the service refuses writes from origins it does not list (403) and bodies that are
    #    not JSON (415).
    attacker = os.path.join(work, "attacker")
    os.makedirs(attacker)
    with open(os.path.join(attacker, "index.html"), "w") as page_file:
        page_file.write("""<!doctype html><title>attacker</title><script>
const target = new URLSearchParams(location.search).get("target") + "/api/v1/favorites";
const body = JSON.stringify({favoritedBy: "Mallory", elementName: "Iron", elementSymbol: "Fe"});
const form = new FormData(); form.append("favoritedBy", "Mallory"); form.append("number", "26");
Promise.allSettled([
  fetch(target, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
  fetch(target, {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body}),
  fetch(target, {method: "POST", mode: "no-cors", body: form}),
  fetch(target, {method: "POST", headers: {"Content-Type": "application/json"}, body}),
  fetch(target + "/1", {method: "DELETE", mode: "no-cors"}),
]).then(results => { document.title = "sent " + results.map(r => r.status).join(","); });
</script>""")
    other = start([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", attacker],
                  r"\((http://\S+?)/\)")
    page.call("Page.navigate", url=other + "/?" + urllib.parse.urlencode({"target": service}))
    page.wait_for("document.title.startsWith('sent')", "the other origin's page sent its writes")
    if api_favorites("Mallory"):
        raise SystemExit(f"browser check FAILED: a page on {other} stored favourites: {api_favorites('Mallory')}")
    # Not vacuous: the three no-cors POSTs reached the service and were refused there (the JSON POST stops at its
    # preflight, and a no-cors DELETE is refused by the browser itself: no-cors allows GET, HEAD and POST only).
    metrics = urllib.request.urlopen(service + "/metrics").read().decode()
    refused = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                  if line.startswith("tilecache_http_requests_total{") and 'status="403"' in line)
    if refused != 3:
        raise SystemExit(f"browser check FAILED: the other origin's three POSTs should have been answered 403, saw {refused:g}")
    # 8. A service with --write-token: the ★ says a token is needed and shows the field; with the token typed there,
    #    it saves.
    protected = start([binary, "serve", "--port", "0", "--cache-dir", os.path.join(work, "cache-token"),
                       "--db", os.path.join(work, "favorites-token.sqlite"), "--tiles-base", tiles, "--images-base", images,
                       "--write-token", "browser-check-token"], r"serving on (\S+)")
    page.viewport(1400, 900)
    page.call("Page.navigate", url=protected + "/#/element/26")
    page.wait_for("document.getElementById('detail-title')?.textContent === 'Iron'", "iron on the protected service")
    page.evaluate("document.getElementById('who').value = 'Token Check';"
                  "document.getElementById('who').dispatchEvent(new Event('change'))")
    page.wait_for("document.getElementById('favorite')?.dataset.state === 'off'", "iron is not a favourite there")
    page.evaluate("document.getElementById('favorite').click()")
    page.wait_for("document.getElementById('favorite-status').dataset.result === 'error' && "
                  "document.getElementById('favorite-status').textContent.includes('write token') && "
                  "!document.getElementById('token-label').hidden", "a refused write asks for the token")
    page.evaluate("document.getElementById('token').value = 'browser-check-token';"
                  "document.getElementById('token').dispatchEvent(new Event('change'))")
    page.evaluate("document.getElementById('favorite').click()")
    page.wait_for("document.getElementById('favorite-status').dataset.result === 'saved'", "saved with the token")
    query = urllib.parse.urlencode({"favoritedBy": "Token Check"})
    if len(json.load(urllib.request.urlopen(f"{protected}/api/v1/favorites?{query}"))) != 1:
        raise SystemExit("browser check FAILED: the page's write with the token was not stored")
    page.screenshot("write-token.png")

    # 9. A service with --client-hints, on a screen of 2 device pixels per CSS pixel: the page asks for hints
    #    (Accept-CH), and Chromium's own Sec-CH-DPR and Sec-CH-Width size an image whose URL gives no width; the
    #    /srcset answer, written into an <img srcset sizes>, lets Chromium pick the candidate a 2x screen needs.
    hinting = start([binary, "serve", "--port", "0", "--cache-dir", os.path.join(work, "cache-hints"),
                     "--db", os.path.join(work, "favorites-hints.sqlite"), "--tiles-base", tiles, "--images-base", images,
                     "--client-hints"], r"serving on (\S+)")
    page.call("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=2, mobile=False)
    page.call("Page.navigate", url=hinting + "/#/table")
    page.wait_for("document.querySelectorAll('.table .tile').length === 118", "the page of the service with --client-hints")
    chosen = json.loads(page.evaluate("""(async () => {
        const answer = await (await fetch('/api/v1/elements/26/image/srcset?widths=128,256,512')).json();
        const picked = new Image(); picked.sizes = '100px'; picked.srcset = answer.srcset; document.body.append(picked);
        await picked.decode();
        const hinted = new Image(); hinted.sizes = '150px'; hinted.srcset = '/api/v1/elements/26/image 640w';
        document.body.append(hinted); await hinted.decode();
        return JSON.stringify({picked: picked.currentSrc, hintedPixels: Math.round(hinted.naturalWidth * 640 / 150)});
    })()"""))
    if "w=256" not in chosen["picked"]:
        raise SystemExit(f"browser check FAILED: at 2x, sizes=100px should pick the 256w candidate of /srcset, picked {chosen['picked']}")
    if abs(chosen["hintedPixels"] - 300) > 2:
        raise SystemExit(f"browser check FAILED: Sec-CH-Width 300 (150 CSS px at 2x) should make a 300-px image, made {chosen['hintedPixels']}")
    print("browser check: client hints from Chromium made a 300-px image for a 150-px box at 2x; /srcset's 256w candidate chosen")
    print("browser check: passed (118 thumbnails loaded, detail view, cesium's photo, placeholder, favourite toggle, "
          "favourites view follows the name and removes, list, phone table/detail/list, no write from another origin, "
          "the write token asked for and used, client hints and srcset)")
finally:
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(work, ignore_errors=True)
