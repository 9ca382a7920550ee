// TileCache front end: a periodic table, a sortable list, element details and favourites, fed only by this service.
"use strict";

const main = document.getElementById("main");
const who = document.getElementById("who");
let elements = [];

who.value = localStorage.getItem("tilecache.who") || "";
who.addEventListener("change", () => localStorage.setItem("tilecache.who", who.value.trim()));

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

/** An <img> that records whether it loaded, so people (and the browser test) can tell. */
function image(src, alt, className) {
  const img = el("img", { src, alt, class: className, loading: "eager", "data-loaded": "pending" });
  img.addEventListener("load", () => { img.dataset.loaded = img.naturalWidth > 0 ? "true" : "error"; });
  img.addEventListener("error", () => { img.dataset.loaded = "error"; });
  return img;
}

function kelvin(value) { return value === null || value === undefined ? "unknown" : `${value} K`; }

function showTable() {
  const grid = el("div", { class: "table", role: "list" });
  for (const e of elements) {
    const tile = el("a", {
      class: `tile ${e.category.replace(/[^a-z]+/gi, "-")}`, href: `#/element/${e.number}`, role: "listitem",
      style: `grid-column:${e.xpos};grid-row:${e.ypos}`, title: e.name, "data-number": e.number,
    }, el("span", { class: "number" }, String(e.number)), image(e.thumbnail_url, e.name, "thumb"),
       el("span", { class: "symbol" }, e.symbol));
    grid.append(tile);
  }
  main.replaceChildren(el("h2", {}, "Periodic table"), el("div", { class: "table-scroll" }, grid));
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
      image(e.thumbnail_url, e.name, "thumb"),
      el("span", { class: "lines" }, el("strong", {}, e.name), el("span", {}, `${e.symbol}(${e.number}) ${e.atomic_mass}`)))));
  }
  main.replaceChildren(el("h2", {}, "Elements"), buttons, list);
}

function showElement(id) {
  const e = elements.find((x) => String(x.number) === id);
  if (!e) { main.replaceChildren(el("p", { class: "status" }, `No element ${id}.`)); return; }
  document.title = `${e.name} · TileCache`;
  const photo = e.has_image
    ? image(e.image_url, `Photo of ${e.name}`, "photo")
    : el("div", { class: "photo placeholder", role: "img", "aria-label": "No photo" }, `No photo of ${e.name} exists`);
  const facts = el("dl", { class: "facts" });
  for (const [term, value] of [["Symbol", e.symbol], ["Atomic number", e.number], ["Atomic weight", e.atomic_mass],
    ["Melting point", kelvin(e.melt)], ["Boiling point", kelvin(e.boil)], ["Discovered by", e.discovered_by || "unknown"],
    ["Phase", e.phase], ["Category", e.category]]) {
    facts.append(el("dt", {}, term), el("dd", { "data-field": term.toLowerCase().replace(/ /g, "-") }, String(value)));
  }
  const status = el("span", { class: "saved", id: "favorite-status" });
  const button = el("button", { id: "favorite", type: "button", onclick: async () => {
    const name = who.value.trim();
    if (!name) { status.textContent = "Enter your name above first."; who.focus(); return; }
    localStorage.setItem("tilecache.who", name);
    button.disabled = true;
    try {
      const response = await fetch("/api/v1/favorites", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ favoritedBy: name, elementName: e.name, elementSymbol: e.symbol }) });
      const body = await response.json();
      status.textContent = response.ok ? `Saved as a favourite of ${body.favoritedBy}.` : `Not saved: ${body.error.message}`;
      status.dataset.result = response.ok ? "saved" : "error";
    } catch (error) { status.textContent = `Not saved: ${error}`; status.dataset.result = "error"; }
    button.disabled = false;
  } }, "★ Favourite");
  const card = el("div", { class: `card tile ${e.category.replace(/[^a-z]+/gi, "-")}` },
    el("span", { class: "number" }, String(e.number)), el("span", { class: "symbol big" }, e.symbol),
    el("span", { class: "name" }, e.name), el("span", { class: "mass" }, String(e.atomic_mass)));
  main.replaceChildren(el("h2", { id: "detail-title" }, e.name),
    el("div", { class: "detail" }, photo, el("div", {}, card, facts, el("p", {}, button, " ", status))));
}

async function showFavorites() {
  const name = who.value.trim();
  const heading = el("h2", {}, "Favourites");
  if (!name) { main.replaceChildren(heading, el("p", { class: "status" }, "Enter your name above to see your favourites.")); return; }
  main.replaceChildren(heading, el("p", { class: "status" }, "Loading…"));
  const response = await fetch(`/api/v1/favorites?favoritedBy=${encodeURIComponent(name)}`);
  const body = await response.json();
  if (!response.ok) { main.replaceChildren(heading, el("p", { class: "status" }, body.error.message)); return; }
  const list = el("ul", { class: "list", id: "favorites" });
  for (const favorite of body.favorites) {
    const e = elements.find((x) => x.symbol === favorite.elementSymbol);
    list.append(el("li", { "data-symbol": favorite.elementSymbol }, el("a", { href: e ? `#/element/${e.number}` : "#/favorites" },
      e ? image(e.thumbnail_url, e.name, "thumb") : "",
      el("span", { class: "lines" }, el("strong", {}, favorite.elementName),
        el("span", {}, `${favorite.elementSymbol} · ${new Date(favorite.createdAt).toLocaleString()}`)))));
  }
  main.replaceChildren(el("h2", {}, `Favourites of ${name}`),
    body.favorites.length ? list : el("p", { class: "status" }, "No favourites yet: open an element and press ★."));
}

function route() {
  const [view, argument] = location.hash.replace(/^#\/?/, "").split("/");
  document.title = "TileCache · The Elements";
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === (view || "table"));
  if (view === "list") showList(argument);
  else if (view === "element") showElement(argument);
  else if (view === "favorites") showFavorites();
  else showTable();
  window.scrollTo(0, 0);
}

async function start() {
  try {
    const response = await fetch("/api/v1/elements");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    elements = (await response.json()).elements;
  } catch (error) {
    main.replaceChildren(el("p", { class: "status" }, `Could not load the elements: ${error.message}`));
    return;
  }
  window.addEventListener("hashchange", route);
  route();
}

start();
