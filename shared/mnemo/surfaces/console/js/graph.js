// An entity's neighbourhood drawn as an SVG (the entity in the middle, its neighbours on a circle).
// Names are set with textContent; the table beside it carries the same facts for screen readers.
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(name) {
  return name.length > 24 ? `${name.slice(0, 23)}…` : name;
}

export function neighbourhood(center, neighbours) {
  const size = 420, middle = size / 2, radius = 150;
  const unique = [...new Map(neighbours.map((n) => [n.node.uuid, n])).values()].slice(0, 16);
  const drawing = svg("svg", { viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: "img",
    "aria-label": `${center.name} and ${unique.length} neighbouring entities (listed in the table below)` });
  unique.forEach((neighbour, index) => {
    const angle = (2 * Math.PI * index) / Math.max(unique.length, 1);
    const x = middle + radius * Math.cos(angle), y = middle + radius * Math.sin(angle);
    drawing.append(svg("line", { x1: middle, y1: middle, x2: x, y2: y, class: neighbour.edge.status === "active" ? "edge" : "edge old" }));
    drawing.append(svg("circle", { cx: x, cy: y, r: 6, class: "node" }));
    drawing.append(svg("text", { x, y: y - 10, "text-anchor": "middle" }, short(neighbour.node.name)));
  });
  drawing.append(svg("circle", { cx: middle, cy: middle, r: 10, class: "node center" }));
  drawing.append(svg("text", { x: middle, y: middle - 16, "text-anchor": "middle", class: "center" }, short(center.name)));
  return drawing;
}
