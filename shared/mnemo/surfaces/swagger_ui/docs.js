// /docs: Swagger UI from the vendored bundle (swagger-ui-dist 5.35.0), started here instead of an
// inline script so the page runs under `script-src 'self'`. No validator badge: it would call a
// third-party host with the document.
window.addEventListener("DOMContentLoaded", () => {
  window.ui = window.SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    validatorUrl: null,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
  });
});
