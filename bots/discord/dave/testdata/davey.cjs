// Drives @snazzah/davey DAVE sessions for the Go interop test
// (interop_test.go): one JSON request a line on stdin, one JSON reply a
// line on stdout; byte strings are hex.
'use strict';
const path = require('node:path');
const readline = require('node:readline');
const { createRequire } = require('node:module');

const req = createRequire(path.join(process.env.DAVEY_DIR, 'package.json'));
const davey = req('@snazzah/davey');

const sessions = new Map();
const hex = (b) => (b ? Buffer.from(b).toString('hex') : null);
const buf = (h) => Buffer.from(h || '', 'hex');

function handle(r) {
  const s = sessions.get(r.session);
  switch (r.op) {
    case 'version':
      return { version: davey.VERSION, protocol: davey.DAVE_PROTOCOL_VERSION };
    case 'new':
      sessions.set(r.session, new davey.DAVESession(davey.DAVE_PROTOCOL_VERSION, r.user, r.channel));
      return {};
    case 'setExternalSender':
      s.setExternalSender(buf(r.data));
      return {};
    case 'keyPackage':
      return { data: hex(s.getSerializedKeyPackage()) };
    case 'processProposals': {
      const res = s.processProposals(r.operation, buf(r.data), r.users);
      return { commit: hex(res.commit), welcome: hex(res.welcome) };
    }
    case 'processCommit':
      s.processCommit(buf(r.data));
      return {};
    case 'processWelcome':
      s.processWelcome(buf(r.data));
      return {};
    case 'state':
      return {
        epoch: s.epoch === null ? null : Number(s.epoch),
        ready: s.ready,
        status: s.status,
        users: s.getUserIds(),
        authenticator: hex(s.getEpochAuthenticator()),
      };
    case 'passthrough':
      s.setPassthroughMode(r.on, 10);
      return {};
    case 'encrypt':
      return { data: hex(s.encryptOpus(buf(r.data))) };
    case 'decrypt':
      return { data: hex(s.decrypt(r.user, 0, buf(r.data))) };
    default:
      throw new Error(`unknown op ${r.op}`);
  }
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let out;
  try {
    out = handle(JSON.parse(line));
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
});
