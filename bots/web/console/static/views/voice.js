// Live voice in the chat view: the microphone button opens a WebSocket to
// GET /api/conversations/{id}/voice, sends the microphone as 16 kHz PCM
// (voice-worklet.js), shows the partial transcripts as the person speaks,
// and plays the agent's spoken reply as its sentences arrive. When the
// server hears the person speak during playback it says "stop" and the
// page stops playing at once (barge-in). Hands-free (the server finds the
// ends of speech) or push-to-talk (hold the Talk button, or the space bar
// outside a text field); an optional wake word.
//
// window.switchboardVoice holds the session's counters and times (audio
// frames received, the page's own voice onsets, playback stops): what a
// person or a test reads to see how quickly playback stopped.
import { h, toast } from "../app.js";

const SETTINGS = "switchboard.voice";

function loadSettings() {
  try { return { mode: "voice", wake: false, phrase: "", ...JSON.parse(localStorage.getItem(SETTINGS) || "{}") }; } catch { return { mode: "voice", wake: false, phrase: "" }; }
}

function saveSettings(s) {
  try { localStorage.setItem(SETTINGS, JSON.stringify(s)); } catch { /* private mode: not kept */ }
}

// Onset: the page's own view of when the person began speaking (the
// server's Endpointer decides; this is for the figures): the first frame
// above ONSET_RMS (-45 dBFS, the Endpointer's floor) after QUIET_MS of
// quiet. It errs early, so the barge-in time measured from it errs long.
const ONSET_RMS = 0.0056;
const ONSET_FRAMES = 1;
const QUIET_MS = 200;

function newStats() {
  return { sent: 0, frames: 0, bytes: 0, sentences: [], partials: [], finals: [], ignored: [], replies: 0, onsets: [], stops: [], speechStarts: [], errors: [] };
}

// voiceControls returns the microphone button and its panel for the
// conversation, and a cleanup function.
export function voiceControls(convId, opts = {}) {
  const settings = loadSettings();
  const stats = newStats();
  window.switchboardVoice = stats;

  const partial = h("div", { class: "voice-partial", id: "voice-partial", "aria-live": "polite" });
  const state = h("span", { class: "pill", id: "voice-state" }, "voice off");
  const mic = h("button", { type: "button", id: "mic", class: "mic", title: "Talk with the agent (microphone)", "aria-pressed": "false" }, "🎤 Voice");
  const talk = h("button", { type: "button", id: "talk", class: "talk", hidden: true, title: "Hold to talk (or hold the space bar)" }, "Hold to talk");
  const mode = h("select", { id: "voice-mode", "aria-label": "How the microphone listens" },
    h("option", { value: "voice" }, "Hands-free"), h("option", { value: "push_to_talk" }, "Push to talk"));
  mode.value = settings.mode;
  const wake = h("input", { type: "checkbox", id: "voice-wake" });
  wake.checked = !!settings.wake;
  const phrase = h("input", { type: "text", id: "voice-phrase", placeholder: "the agent's name", "aria-label": "Wake phrase", size: 14 });
  phrase.value = settings.phrase || "";
  const keep = () => saveSettings({ mode: mode.value, wake: wake.checked, phrase: phrase.value.trim() });
  mode.addEventListener("change", keep);
  wake.addEventListener("change", keep);
  phrase.addEventListener("change", keep);

  const panel = h("div", { class: "voice", id: "voice" },
    h("div", { class: "row" }, mic, talk, state, mode,
      h("label", { title: "Only utterances that begin with the wake phrase are sent" }, wake, " wake word"), phrase),
    partial);

  let ws = null, ctx = null, stream = null, node = null;
  let on = false;
  let player = null;

  const setState = (t, cls) => { state.textContent = t; state.className = "pill" + (cls ? " " + cls : ""); };

  // ---- playback ----
  // Each sentence's frames are scheduled back to back; stop() cuts them
  // all at once. Frames of a sentence at or before the last stop are
  // dropped (they were on the wire when the stop was sent).
  const newPlayer = () => ({ sources: new Set(), until: 0, formats: new Map(), stoppedThrough: 0 });
  const playing = () => player && ctx && player.sources.size > 0 && player.until > ctx.currentTime;
  const stopPlayback = (through, reason) => {
    const was = playing();
    for (const s of player.sources) { try { s.stop(); } catch { /* already ended */ } }
    player.sources.clear();
    player.until = ctx ? ctx.currentTime : 0;
    player.stoppedThrough = Math.max(player.stoppedThrough, through || 0);
    stats.stops.push({ t: performance.now(), sentence: through || 0, reason, wasPlaying: was });
  };
  const playFrame = (buf) => {
    const n = new DataView(buf).getUint32(0, true);
    stats.frames++;
    stats.bytes += buf.byteLength - 4;
    if (n <= player.stoppedThrough) return;
    const f = player.formats.get(n);
    if (!f) return;
    const samples = new Int16Array(buf, 4, (buf.byteLength - 4) >> 1);
    const frames = samples.length / f.channels;
    if (!frames) return;
    const ab = ctx.createBuffer(f.channels, frames, f.rate);
    for (let c = 0; c < f.channels; c++) {
      const d = ab.getChannelData(c);
      for (let i = 0; i < frames; i++) d[i] = samples[i * f.channels + c] / 32768;
    }
    const src = ctx.createBufferSource();
    src.buffer = ab;
    src.connect(ctx.destination);
    const at = Math.max(ctx.currentTime + 0.02, player.until);
    src.start(at);
    player.until = at + ab.duration;
    player.sources.add(src);
    src.onended = () => player.sources.delete(src);
  };

  // ---- the socket ----
  const onMessage = (ev) => {
    if (typeof ev.data !== "string") { playFrame(ev.data); return; }
    const m = JSON.parse(ev.data);
    switch (m.type) {
      case "ready":
        setState(m.mode === "push_to_talk" ? "hold to talk" : "listening", "running");
        talk.hidden = m.mode !== "push_to_talk";
        // The space bar talks from here (on the microphone button it would
        // turn the microphone off).
        if (!talk.hidden && document.activeElement === mic) talk.focus();
        if (!m.speaks) toast(`${m.agent} does not speak: its replies are shown, not read out`);
        break;
      case "speech_start":
        stats.speechStarts.push(performance.now());
        setState("hearing you", "running");
        break;
      case "partial":
        stats.partials.push(m.text);
        partial.textContent = m.text + "…";
        break;
      case "final":
        stats.finals.push(m.text);
        partial.textContent = "";
        setState("listening", "running");
        break;
      case "ignored":
        stats.ignored.push(m.text || "");
        partial.textContent = m.text ? `Not sent (${m.reason}): ${m.text}` : "";
        setState("listening", "running");
        break;
      case "reply":
        stats.replies++;
        break;
      case "sentence":
        stats.sentences.push({ n: m.sentence, text: m.text, ms: m.ms, t: performance.now() });
        player.formats.set(m.sentence, { rate: m.sample_rate, channels: m.channels || 1 });
        break;
      case "stop":
        stopPlayback(m.sentence, m.reason);
        break;
      case "error":
        stats.errors.push(m.text);
        toast(m.text, "error");
        break;
    }
  };

  // onset watches the level of what the microphone sends: speech is
  // ONSET_FRAMES loud frames in a row, and it ends after QUIET_MS of quiet;
  // the onset's time is its first loud frame's arrival.
  let loud = 0, loudFrom = 0, quietFrom = performance.now(), inSpeech = false;
  const onset = (rms) => {
    const now = performance.now();
    if (rms > ONSET_RMS) {
      if (loud === 0) loudFrom = now;
      loud++;
      if (!inSpeech && loud >= ONSET_FRAMES) {
        inSpeech = true;
        stats.onsets.push({ t: loudFrom, playing: playing() });
      }
      return;
    }
    if (loud > 0) quietFrom = now;
    loud = 0;
    if (inSpeech && now - quietFrom >= QUIET_MS) inSpeech = false;
  };

  const start = async () => {
    if (on) return;
    on = true;
    mic.setAttribute("aria-pressed", "true");
    mic.classList.add("on");
    setState("starting", "running");
    try {
      try { ctx = new AudioContext({ sampleRate: 16000, latencyHint: "interactive" }); } catch { ctx = new AudioContext({ latencyHint: "interactive" }); }
      await ctx.audioWorklet.addModule("/console/views/voice-worklet.js");
      stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false } });
      if (!on) { stop(); return; }
      player = newPlayer();
      const src = ctx.createMediaStreamSource(stream);
      node = new AudioWorkletNode(ctx, "pcm16-capture");
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      ws = new WebSocket(`${scheme}://${location.host}/api/conversations/${convId}/voice`);
      ws.binaryType = "arraybuffer";
      let ready = false;
      ws.onopen = () => {
        keep();
        const s = loadSettings();
        ws.send(JSON.stringify({
          type: "start", mode: s.mode, sample_rate: 16000,
          wake: s.wake ? s.phrase : "", wake_name: s.wake && !s.phrase,
          context: opts.context ? opts.context() : undefined,
        }));
        ready = true;
      };
      ws.onmessage = onMessage;
      ws.onclose = (ev) => {
        if (on && ev.reason) toast("Voice: " + ev.reason, "error");
        else if (on && ev.code !== 1000) toast("Voice: the connection closed", "error");
        stop();
      };
      node.port.onmessage = ({ data }) => {
        onset(data.rms);
        if (ready && ws.readyState === WebSocket.OPEN) { ws.send(data.pcm); stats.sent++; }
      };
      src.connect(node);
      await ctx.resume();
    } catch (e) {
      toast("Voice: " + (e.message || e), "error");
      stop();
    }
  };

  const stop = () => {
    if (!on) return;
    on = false;
    mic.setAttribute("aria-pressed", "false");
    mic.classList.remove("on");
    talk.hidden = true;
    setState("voice off");
    partial.textContent = "";
    if (ws) {
      // This socket's late events are not the next session's.
      ws.onclose = ws.onmessage = ws.onopen = null;
      try { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" })); ws.close(1000); } catch { /* closing anyway */ }
    }
    if (node) node.port.onmessage = null;
    if (stream) for (const t of stream.getTracks()) t.stop();
    if (player && ctx) stopPlayback(player.stoppedThrough, "off");
    if (ctx) ctx.close();
    ws = ctx = stream = node = null;
  };

  // ---- push-to-talk ----
  let held = false;
  const ptt = (down) => {
    if (!ws || ws.readyState !== WebSocket.OPEN || held === down) return;
    held = down;
    talk.classList.toggle("on", down);
    if (down && playing()) stopPlayback(player.stoppedThrough, "push_to_talk"); // the server stops too
    ws.send(JSON.stringify({ type: "ptt", down }));
  };
  talk.addEventListener("pointerdown", (ev) => { ev.preventDefault(); ptt(true); });
  talk.addEventListener("pointerup", () => ptt(false));
  talk.addEventListener("pointerleave", () => ptt(false));
  const typing = (t) => t && (t === mic || t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT" || t.isContentEditable);
  const keydown = (ev) => { if (ev.code === "Space" && !talk.hidden && !typing(ev.target)) { ev.preventDefault(); if (!ev.repeat) ptt(true); } };
  const keyup = (ev) => { if (ev.code === "Space" && !talk.hidden && !typing(ev.target)) { ev.preventDefault(); ptt(false); } };
  document.addEventListener("keydown", keydown);
  document.addEventListener("keyup", keyup);

  mic.addEventListener("click", () => (on ? stop() : start()));

  const cleanup = () => {
    stop();
    document.removeEventListener("keydown", keydown);
    document.removeEventListener("keyup", keyup);
  };
  return { el: panel, cleanup };
}
