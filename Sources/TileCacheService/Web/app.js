// TileCache front end: a periodic table, a sortable list, element details and favourites, fed only by this service.
"use strict";

const main = document.getElementById("main");
const who = document.getElementById("who");
let elements = [];

who.value = localStorage.getItem("tilecache.who") || "";
let whoTimer;
/** A new name shows at once: the favourites view and the ★ state follow the name as it is typed. */
function nameChanged(delay) {
  clearTimeout(whoTimer);
  whoTimer = setTimeout(() => {
    localStorage.setItem("tilecache.who", who.value.trim());
    if (["favorites", "element"].includes(currentView())) route({ keepScroll: true });
  }, delay);
}
who.addEventListener("input", () => nameChanged(250));
who.addEventListener("change", () => nameChanged(0));

// A service started with --write-token answers writes without its token 401: the page then shows a field for it, and
// keeps what is typed there in this browser's storage (sent as Authorization: Bearer, only to this service).
const token = document.getElementById("token");
const tokenLabel = document.getElementById("token-label");
token.value = localStorage.getItem("tilecache.writeToken") || "";
tokenLabel.hidden = !token.value;
token.addEventListener("change", () => {
  if (token.value.trim()) localStorage.setItem("tilecache.writeToken", token.value.trim());
  else localStorage.removeItem("tilecache.writeToken");
});

/** The headers of a write: `extra`, and the write token when one was given. */
function writeHeaders(extra = {}) {
  const value = token.value.trim();
  return value ? { ...extra, Authorization: `Bearer ${value}` } : extra;
}

/** An API error as the page shows it; a refused token reveals the token field. */
function apiError(status, body) {
  if (status === 401) {
    tokenLabel.hidden = false;
    return new Error(body.error.reason === "bad-token" ? "the write token is not this service's: check it above"
      : "this service protects writes: enter its write token above");
  }
  return new Error(body.error.message);
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

/** A placeholder in place of an image that does not exist or did not load: never a broken-image icon. */
function placeholder(className, text) {
  return el("div", { class: `${className} placeholder`, role: "img", "aria-label": text, "data-loaded": "placeholder" }, text);
}

/**
 * An <img> that records whether it loaded (for people and the browser check) and turns into a placeholder if not.
 * With a placeholder (an element record's thumbnail_lqip and thumbnail_color), the box shows the blurred tiny image on
 * the image's colour until the image arrives: never an empty box.
 */
function image(src, alt, className, missingText = "No image", preview = null) {
  const img = el("img", { src, alt, class: className, loading: "eager", "data-loaded": "pending" });
  if (preview) showPreview(img, preview);
  const fail = () => { img.dataset.loaded = "error"; img.replaceWith(placeholder(className, missingText)); };
  img.addEventListener("load", () => {
    if (img.naturalWidth > 0) { img.dataset.loaded = "true"; img.style.background = ""; } else fail();
  });
  img.addEventListener("error", fail);
  return img;
}

/**
 * Paints a placeholder ({lqip, color}: a WebP data URI and a #rrggbb colour) behind an image that has not arrived,
 * through the CSSOM (the page's CSP allows no style attributes).
 */
function showPreview(img, preview) {
  if (img.dataset.loaded !== "pending") return;
  const lqip = /^data:image\/webp;base64,[A-Za-z0-9+/=]+$/.test(preview.lqip || "") ? preview.lqip : null;
  const color = /^#[0-9a-f]{6}$/.test(preview.color || "") ? preview.color : null;
  if (!lqip && !color) return;
  img.style.background = (lqip ? `url("${lqip}") center / cover no-repeat, ` : "") + (color || "#ccd");
  img.dataset.placeholder = "true";
}

/** An element record's thumbnail placeholder, for image(). */
function preview(e) { return { lqip: e.thumbnail_lqip, color: e.thumbnail_color }; }

function kelvin(value) { return value === null || value === undefined ? "unknown" : `${value} K`; }

function showTable() {
  const grid = el("div", { class: "table", role: "list" });
  for (const e of elements) {
    const tile = el("a", {
      class: `tile ${e.category.replace(/[^a-z]+/gi, "-")}`, href: `#/element/${e.number}`, role: "listitem",
      style: `grid-column:${e.xpos};grid-row:${e.ypos}`, title: e.name, "data-number": e.number,
    }, el("span", { class: "number" }, String(e.number)), image(e.thumbnail_url, e.name, "thumb", e.symbol, preview(e)),
       el("span", { class: "symbol" }, e.symbol));
    grid.append(tile);
  }
  main.replaceChildren(el("h2", {}, "Periodic table"), el("p", { class: "status scroll-hint" }, "Scroll sideways for every column."),
    el("div", { class: "table-scroll", id: "table-scroll" }, grid));
}

function showList(sort) {
  const keys = {
    name: (a, b) => a.name.localeCompare(b.name), number: (a, b) => a.number - b.number,
    symbol: (a, b) => a.symbol.localeCompare(b.symbol),
    phase: (a, b) => a.phase.localeCompare(b.phase) || a.number - b.number,
  };
  const sorted = [...elements].sort(keys[sort] || keys.number);
  const buttons = el("div", { class: "sort", role: "group", "aria-label": "Sort by" }, "Sort by ");
  for (const key of Object.keys(keys)) {
    buttons.append(el("a", { href: `#/list/${key}`, class: key === (keys[sort] ? sort : "number") ? "active" : "" }, key));
  }
  const list = el("ul", { class: "list" });
  for (const e of sorted) {
    list.append(el("li", {}, el("a", { href: `#/element/${e.number}`, "data-number": e.number },
      image(e.thumbnail_url, e.name, "thumb", e.symbol, preview(e)),
      el("span", { class: "lines" }, el("strong", {}, e.name), el("span", {}, `${e.symbol}(${e.number}) ${e.atomic_mass}`)))));
  }
  main.replaceChildren(el("h2", {}, "Elements"), buttons, list);
}

function showElement(id) {
  const e = elements.find((x) => String(x.number) === id);
  if (!e) { main.replaceChildren(el("p", { class: "status" }, `No element ${id}.`)); return; }
  document.title = `${e.name} · TileCache`;
  const photo = e.has_image
    ? image(e.image_url, `Photo of ${e.name}`, "photo", `No photo of ${e.name} could be loaded`)
    : placeholder("photo", `No photo of ${e.name} exists`);
  if (e.has_image) {
    // The photo's own placeholder, from the service, while the photo itself is on its way.
    fetch(`${e.image_url}?format=placeholder`).then((r) => (r.ok ? r.json() : null))
      .then((p) => { if (p) showPreview(photo, { lqip: p.lqip, color: p.dominant_color }); }).catch(() => {});
  }
  const facts = el("dl", { class: "facts" });
  for (const [term, value] of [["Symbol", e.symbol], ["Atomic number", e.number], ["Atomic weight", e.atomic_mass],
    ["Melting point", kelvin(e.melt)], ["Boiling point", kelvin(e.boil)], ["Discovered by", e.discovered_by || "unknown"],
    ["Phase", e.phase], ["Category", e.category]]) {
    facts.append(el("dt", {}, term), el("dd", { "data-field": term.toLowerCase().replace(/ /g, "-") }, String(value)));
  }
  const status = el("span", { class: "saved", id: "favorite-status" });
  const button = el("button", { id: "favorite", type: "button", "aria-pressed": "false", onclick: () => toggleFavorite(e, button, status) },
    "☆ Favourite");
  showFavoriteState(e, button, status);
  const card = el("div", { class: `card tile ${e.category.replace(/[^a-z]+/gi, "-")}` },
    el("span", { class: "number" }, String(e.number)), el("span", { class: "symbol big" }, e.symbol),
    el("span", { class: "name" }, e.name), el("span", { class: "mass" }, String(e.atomic_mass)));
  main.replaceChildren(el("h2", { id: "detail-title" }, e.name),
    el("div", { class: "detail" }, photo, el("div", {}, card, facts, el("p", {}, button, " ", status))));
}

/** A request to this service's API: the JSON answer, or an Error with the API's message. */
async function api(path, options = {}) {
  const response = await fetch(path, options);
  const body = await response.json();
  if (!response.ok) throw apiError(response.status, body);
  return body;
}

/** The favourites of `person`, of element `e` only when given (then normally none or one): every page of them (the
 * API answers 100 at most per request; one person may keep 1,000). */
async function favoritesOf(person, e) {
  const query = `/api/v1/favorites?favoritedBy=${encodeURIComponent(person)}` + (e ? `&number=${e.number}` : "");
  const all = [];
  for (let page = 1; ; page++) {
    const batch = await api(`${query}&limit=100&page=${page}`);
    all.push(...batch);
    if (batch.length < 100) return all;
  }
}

/** Deletes a favourite by id; one already gone (404) counts as deleted. */
async function deleteFavorite(id) {
  const response = await fetch(`/api/v1/favorites/${encodeURIComponent(id)}`, { method: "DELETE", headers: writeHeaders() });
  if (!response.ok && response.status !== 404) throw apiError(response.status, await response.json());
}

function renderFavoriteButton(button, on) {
  button.textContent = on ? "★ Favourite" : "☆ Favourite";
  button.setAttribute("aria-pressed", String(on));
  button.dataset.state = on ? "on" : "off";
  button.title = on ? "Remove from your favourites" : "Add to your favourites";
}

/** Shows whether the person named above has `e` as a favourite. */
async function showFavoriteState(e, button, status) {
  const person = who.value.trim();
  renderFavoriteButton(button, false);
  if (!person) { status.textContent = "Enter your name above to keep favourites."; return; }
  try {
    const mine = await favoritesOf(person, e);
    renderFavoriteButton(button, mine.length > 0);
    status.textContent = mine.length ? `A favourite of ${person}.` : "";
    status.dataset.result = mine.length ? "saved" : "none";
  } catch (error) { status.textContent = `Favourites unavailable: ${error.message}`; status.dataset.result = "error"; }
}

/** ★ toggles: POST when `e` is not yet a favourite of the person, DELETE (by id) every one of theirs when it is. */
async function toggleFavorite(e, button, status) {
  const person = who.value.trim();
  if (!person) { status.textContent = "Enter your name above first."; who.focus(); return; }
  localStorage.setItem("tilecache.who", person);
  button.disabled = true;
  try {
    const mine = await favoritesOf(person, e);
    if (mine.length === 0) {
      const body = await api("/api/v1/favorites", { method: "POST", headers: writeHeaders({ "Content-Type": "application/json" }),
        body: JSON.stringify({ favoritedBy: person, elementName: e.name, elementSymbol: e.symbol }) });
      renderFavoriteButton(button, true);
      status.textContent = `Saved as a favourite of ${body.favoritedBy}.`;
      status.dataset.result = "saved";
    } else {
      for (const favorite of mine) await deleteFavorite(favorite.id);
      renderFavoriteButton(button, false);
      status.textContent = `Removed from the favourites of ${person}.`;
      status.dataset.result = "removed";
    }
  } catch (error) { status.textContent = `Not changed: ${error.message}`; status.dataset.result = "error"; }
  button.disabled = false;
}

let favoritesRequest = 0;

async function showFavorites() {
  const name = who.value.trim();
  const heading = el("h2", {}, "Favourites");
  const request = ++favoritesRequest;
  if (!name) { main.replaceChildren(heading, el("p", { class: "status" }, "Enter your name above to see your favourites.")); return; }
  main.replaceChildren(heading, el("p", { class: "status" }, "Loading…"));
  let favorites;
  try {
    favorites = await favoritesOf(name);
  } catch (error) {
    if (request === favoritesRequest && currentView() === "favorites") {
      main.replaceChildren(heading, el("p", { class: "status" }, `Favourites unavailable: ${error.message}`));
    }
    return;
  }
  // The name changed, or another view opened, while this list was loading.
  if (request !== favoritesRequest || currentView() !== "favorites") return;
  const list = el("ul", { class: "list", id: "favorites" });
  for (const favorite of favorites) {
    const e = elements.find((x) => x.number === favorite.number) || elements.find((x) => x.symbol === favorite.elementSymbol);
    const remove = el("button", { type: "button", class: "remove", "aria-label": `Remove ${favorite.elementName}`, onclick: async () => {
      remove.disabled = true;
      try {
        await deleteFavorite(favorite.id);
        showFavorites();
      } catch (error) {
        remove.disabled = false;
        remove.title = `Not removed: ${error.message}`;
        remove.textContent = "Retry remove";
      }
    } }, "Remove");
    list.append(el("li", { "data-symbol": favorite.elementSymbol, "data-id": favorite.id },
      el("a", { href: e ? `#/element/${e.number}` : "#/favorites" },
        e ? image(e.thumbnail_url, e.name, "thumb", e.symbol, preview(e)) : "",
        el("span", { class: "lines" }, el("strong", {}, favorite.elementName),
          el("span", {}, `${favorite.elementSymbol} · ${new Date(favorite.createdAt).toLocaleString()}`))),
      remove));
  }
  main.replaceChildren(el("h2", {}, `Favourites of ${name}`),
    favorites.length ? list : el("p", { class: "status" }, "No favourites yet: open an element and press ☆."));
}

/** The address's view (table, list, element or favorites) and its argument. */
function address() {
  const [view, argument] = location.hash.replace(/^#\/?/, "").split("/");
  return { view: view || "table", argument };
}

function currentView() { return address().view; }

function route({ keepScroll = false } = {}) {
  const { view, argument } = address();
  document.title = "TileCache · The Elements";
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === view);
  if (view === "list") showList(argument);
  else if (view === "element") showElement(argument);
  else if (view === "favorites") showFavorites();
  else showTable();
  if (!keepScroll) window.scrollTo(0, 0);
}

async function start() {
  try {
    // As the seed apps do: the first 100 elements, then the remaining 18.
    for (const path of ["/api/v1/elements", "/api/v1/elements_remaining"]) {
      const response = await fetch(path);
      if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
      elements = elements.concat(await response.json());
    }
  } catch (error) {
    main.replaceChildren(el("p", { class: "status" }, `Could not load the elements: ${error.message}`));
    return;
  }
  window.addEventListener("hashchange", () => route());
  route();
}

start();
