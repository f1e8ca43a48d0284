// The API reference, drawn from the app's own /openapi.json (no external script or style).
"use strict";

function node(tag, text, cls) {
  const n = document.createElement(tag);
  if (text !== undefined) n.textContent = text;
  if (cls) n.className = cls;
  return n;
}

function typeOf(schema, spec) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, spec)).join(" | ");
  return schema.type || "";
}

async function render() {
  const root = document.getElementById("docs");
  const spec = await (await fetch("/openapi.json")).json();
  root.textContent = "";
  root.appendChild(node("h2", `${spec.info.title} ${spec.info.version}`));
  root.appendChild(node("p", spec.info.description || ""));
  root.appendChild(node("p", 'Every refusal is a 4xx answer with a JSON body {"error": "one sentence"}.'));
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const box = node("section", undefined, "endpoint");
      box.id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
      const h = node("h3");
      h.appendChild(node("span", method.toUpperCase(), "method"));
      h.appendChild(node("code", path));
      box.appendChild(h);
      if (op.summary) box.appendChild(node("p", op.summary));
      if (op.description) box.appendChild(node("p", op.description));
      const params = op.parameters || [];
      if (params.length) {
        const table = node("table");
        const head = node("tr");
        for (const t of ["parameter", "in", "type", "required", "default", "description"]) head.appendChild(node("th", t));
        table.appendChild(head);
        for (const p of params) {
          const tr = node("tr");
          const s = p.schema || {};
          for (const v of [p.name, p.in, typeOf(s, spec), p.required ? "yes" : "", s.default === undefined ? "" : JSON.stringify(s.default), p.description || s.description || ""]) tr.appendChild(node("td", v));
          table.appendChild(tr);
        }
        box.appendChild(table);
      }
      const body = op.requestBody && op.requestBody.content;
      if (body) {
        for (const [type, media] of Object.entries(body)) {
          box.appendChild(node("p", `Body (${type}): ${typeOf(media.schema, spec)}`));
          const ref = media.schema && media.schema.$ref;
          const schema = ref ? spec.components.schemas[ref.split("/").pop()] : media.schema;
          if (schema && schema.properties) {
            const lines = Object.entries(schema.properties).map(([k, v]) =>
              `${k}: ${typeOf(v, spec)}${(schema.required || []).includes(k) ? " (required)" : ""}${v.description ? " - " + v.description : ""}`);
            box.appendChild(node("pre", lines.join("\n")));
          }
        }
      }
      root.appendChild(box);
    }
  }
}
render().catch((err) => { document.getElementById("docs").textContent = `Could not load /openapi.json: ${err.message}`; });
