// Building the page. Stored text (memory content, metadata, entity names, job reasons) is hostile:
// every string goes in as a text node or a property, never as markup. This module is the only place
// that creates elements, and it has no path to innerHTML, insertAdjacentHTML or attribute-set URLs.

const PROPERTIES = new Set(["id", "className", "type", "value", "name", "htmlFor", "disabled", "checked",
  "placeholder", "min", "max", "required", "hidden", "tabIndex", "title", "accept", "multiple", "autocomplete",
  "rows", "open", "readOnly", "download"]);

/** el("p", {className: "x", onclick: fn, "aria-live": "polite"}, "text", child, ...) */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "href") node.setAttribute("href", safeHref(value));
    else if (key.startsWith("aria-") || key.startsWith("data-") || key === "role" || key === "for" || key === "scope") node.setAttribute(key, String(value));
    else if (PROPERTIES.has(key)) node[key] = value;
    else throw new Error(`el: unsupported property ${key}`);
  }
  append(node, ...children);
  return node;
}

/** Only the console's own hash routes are links: a stored `javascript:` URL can never become one. */
export function safeHref(value) {
  const href = String(value);
  return href.startsWith("#/") ? href : "#/";
}

export function append(node, ...children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, ...children);
}

/** A labelled form control: the label names the control for screen readers and for clicks. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  const parts = [el("label", { htmlFor: id }, label), control];
  if (hint) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    parts.push(el("small", { id: hintId, className: "hint" }, hint));
  }
  return el("div", { className: "field" }, ...parts);
}

export function select(name, options, value) {
  const node = el("select", { name });
  for (const [optionValue, text] of options) node.append(el("option", { value: optionValue }, text));
  node.value = value ?? options[0][0];
  return node;
}

export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** A definition list from [term, description] pairs. */
export function facts(pairs) {
  return el("dl", { className: "pairs" }, ...pairs.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value ?? "—")]));
}

export function button(text, onclick, props = {}) {
  return el("button", { type: "button", onclick, ...props }, text);
}

/** Metadata shown as JSON text (never parsed into markup). */
export function json(value) {
  return el("pre", { className: "json" }, JSON.stringify(value, null, 2));
}
