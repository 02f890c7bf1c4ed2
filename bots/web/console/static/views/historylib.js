// What the history and artifacts views share: their stylesheet, a request
// helper for the methods and answers app.js's JSON client does not cover
// (PATCH, text and file downloads), with the same session cookie and CSRF
// header.
import { session } from "../app.js";

// useStyles adds the views' stylesheet once (the page's CSP takes styles
// from this origin only).
export function useStyles() {
  if (document.getElementById("history-css")) return;
  document.head.append(Object.assign(document.createElement("link"), { id: "history-css", rel: "stylesheet", href: "/console/views/history.css" }));
}

function csrf() {
  const me = session();
  if (me && me.csrf) return me.csrf;
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

async function raw(method, path, body) {
  const headers = { Accept: "application/json, text/plain, text/markdown" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    const t = csrf();
    if (t) headers["X-CSRF-Token"] = t;
  }
  const res = await fetch(path, { method, headers, credentials: "same-origin", body: method === "GET" ? undefined : JSON.stringify(body ?? {}) });
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return res;
}

// send makes a JSON request and returns the JSON answer (null for none).
export async function send(method, path, body) {
  const res = await raw(method, path, body);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// text makes a request and returns the answer as text.
export async function text(method, path, body) {
  return (await raw(method, path, body)).text();
}

// download saves the answer of a request as a file.
export async function download(method, path, body, name) {
  const blob = await (await raw(method, path, body)).blob();
  const url = URL.createObjectURL(blob);
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
