package voice

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/bots/discord/dave"
)

// Voice gateway opcodes (version 8) that concern DAVE.
const (
	OpClientsConnect          = 11
	OpClientDisconnect        = 13
	OpPrepareTransition       = 21
	OpExecuteTransition       = 22
	OpReadyForTransition      = 23
	OpPrepareEpoch            = 24
	OpMLSExternalSender       = 25 // binary
	OpMLSKeyPackage           = 26 // binary
	OpMLSProposals            = 27 // binary
	OpMLSCommitWelcome        = 28 // binary
	OpMLSAnnounceCommit       = 29 // binary
	OpMLSWelcome              = 30 // binary
	OpMLSInvalidCommitWelcome = 31
)

// Message is one message to the voice gateway: JSON {"op", "d": Data}, or
// binary when Binary is set (the opcode byte, then Binary).
type Message struct {
	Op     int
	Data   any
	Binary []byte
}

// Bytes is the message as sent on the WebSocket.
func (m Message) Bytes() ([]byte, error) {
	if m.Binary != nil {
		return append([]byte{byte(m.Op)}, m.Binary...), nil
	}
	return json.Marshal(struct {
		Op   int `json:"op"`
		Data any `json:"d"`
	}{m.Op, m.Data})
}

type transitionData struct {
	TransitionID uint16 `json:"transition_id"`
}

// DAVEOptions configures a DAVE.
type DAVEOptions struct {
	UserID    uint64 // the bot's user ID
	ChannelID uint64 // the voice channel's ID
	Logger    *slog.Logger
	Now       func() time.Time // default time.Now
}

// previousKeysFor is how long the previous epoch's keys still decrypt
// after a transition, for frames already on their way (libdave keeps them
// 10 s: kCryptorExpiry).
const previousKeysFor = 10 * time.Second

func (o *DAVEOptions) validate() error {
	if o.UserID == 0 {
		return errors.New("voice: DAVEOptions.UserID is required")
	}
	if o.ChannelID == 0 {
		return errors.New("voice: DAVEOptions.ChannelID is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// keys are one epoch's frame keys.
type keys struct {
	enc *dave.Encryptor
	dec map[uint64]*dave.Decryptor
}

// DAVE follows the DAVE protocol on one voice gateway connection: it
// answers the gateway's DAVE opcodes (the sequence of libdave's and
// discord.js's sessions) and encrypts and decrypts Opus frames with the
// keys of the transition last executed. It is not safe for concurrent use.
type DAVE struct {
	opts      DAVEOptions
	session   *dave.Session
	version   int // the protocol version in effect: 0 (none) or 1
	connected []uint64
	pending   map[uint16]int // transition ID → protocol version
	staged    map[uint16]*keys
	current   *keys
	previous  *keys     // the keys before the last transition
	prevUntil time.Time // when previous stops being used
}

// NewDAVE starts with no protocol version in effect; Start begins the
// session once the gateway's session description names one.
func NewDAVE(opts DAVEOptions) (*DAVE, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &DAVE{opts: opts, pending: map[uint16]int{}, staged: map[uint16]*keys{}}, nil
}

// Start begins DAVE at the protocol version of the session description
// (opcode 4's dave_protocol_version): for version 1 a fresh session and
// its key package (opcode 26).
func (d *DAVE) Start(ctx context.Context, version int) ([]Message, error) {
	d.version = version
	return d.reinit(ctx)
}

func (d *DAVE) reinit(ctx context.Context) ([]Message, error) {
	d.staged = map[uint16]*keys{}
	if d.version == 0 {
		d.session, d.current = nil, nil
		return nil, nil
	}
	if d.version != dave.ProtocolVersion {
		return nil, fmt.Errorf("voice: DAVE protocol version %d; this client speaks %d", d.version, dave.ProtocolVersion)
	}
	s, err := dave.NewSession(d.opts.UserID, d.opts.ChannelID)
	if err != nil {
		return nil, err
	}
	d.session, d.current = s, nil
	kp, err := s.KeyPackage()
	if err != nil {
		return nil, err
	}
	d.opts.Logger.DebugContext(ctx, "dave session started", "channel_id", d.opts.ChannelID)
	return []Message{{Op: OpMLSKeyPackage, Binary: kp}}, nil
}

// HandleJSON takes a JSON message of the gateway (op and its "d"); other
// opcodes than DAVE's and the client list are ignored.
func (d *DAVE) HandleJSON(ctx context.Context, op int, data json.RawMessage) ([]Message, error) {
	switch op {
	case OpClientsConnect:
		var v struct {
			UserIDs []string `json:"user_ids"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("voice: clients connect: %w", err)
		}
		for _, s := range v.UserIDs {
			id, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("voice: clients connect: user_ids: %w", err)
			}
			if !slices.Contains(d.connected, id) {
				d.connected = append(d.connected, id)
			}
		}
	case OpClientDisconnect:
		var v struct {
			UserID string `json:"user_id"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("voice: client disconnect: %w", err)
		}
		id, err := strconv.ParseUint(v.UserID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("voice: client disconnect: user_id: %w", err)
		}
		d.connected = slices.DeleteFunc(d.connected, func(x uint64) bool { return x == id })
	case OpPrepareTransition:
		var v struct {
			TransitionID    uint16 `json:"transition_id"`
			ProtocolVersion int    `json:"protocol_version"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("voice: prepare transition: %w", err)
		}
		d.pending[v.TransitionID] = v.ProtocolVersion
		if v.TransitionID == 0 {
			d.execute(ctx, 0)
			return nil, nil
		}
		return []Message{{Op: OpReadyForTransition, Data: transitionData{v.TransitionID}}}, nil
	case OpExecuteTransition:
		var v transitionData
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("voice: execute transition: %w", err)
		}
		d.execute(ctx, v.TransitionID)
	case OpPrepareEpoch:
		var v struct {
			ProtocolVersion int    `json:"protocol_version"`
			Epoch           uint64 `json:"epoch"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("voice: prepare epoch: %w", err)
		}
		// Epoch 1 is a new group: start over with a new key package.
		if v.Epoch == 1 {
			d.version = v.ProtocolVersion
			return d.reinit(ctx)
		}
	}
	return nil, nil
}

// HandleBinary takes a binary message of the gateway: a 2-byte sequence
// number, the opcode, the payload.
func (d *DAVE) HandleBinary(ctx context.Context, msg []byte) ([]Message, error) {
	if len(msg) < 3 {
		return nil, errors.New("voice: binary message shorter than its header")
	}
	op, payload := int(msg[2]), msg[3:]
	if d.session == nil {
		return nil, fmt.Errorf("voice: DAVE opcode %d without a DAVE session", op)
	}
	switch op {
	case OpMLSExternalSender:
		return nil, d.session.SetExternalSender(payload)
	case OpMLSProposals:
		ids := append([]uint64{d.opts.UserID}, d.connected...)
		commit, welcome, err := d.session.ProcessProposals(payload, ids)
		if err != nil {
			return nil, err
		}
		if commit == nil {
			return nil, nil
		}
		return []Message{{Op: OpMLSCommitWelcome, Binary: append(bytes.Clone(commit), welcome...)}}, nil
	case OpMLSAnnounceCommit, OpMLSWelcome:
		if len(payload) < 2 {
			return nil, fmt.Errorf("voice: opcode %d without a transition ID", op)
		}
		id := binary.BigEndian.Uint16(payload)
		var err error
		if op == OpMLSAnnounceCommit {
			err = d.session.ProcessCommit(payload[2:])
			if errors.Is(err, dave.ErrNotJoined) {
				return nil, nil // a commit for a group we are not in yet
			}
		} else {
			err = d.session.ProcessWelcome(payload[2:])
		}
		if err != nil {
			// Ask to be added again, with a new key package.
			d.opts.Logger.WarnContext(ctx, "dave commit or welcome refused", "op", op, "transition_id", id, "error", err)
			out := []Message{{Op: OpMLSInvalidCommitWelcome, Data: transitionData{id}}}
			more, rerr := d.reinit(ctx)
			return append(out, more...), rerr
		}
		k, err := d.epochKeys()
		if err != nil {
			return nil, err
		}
		d.staged[id] = k
		if id == 0 {
			d.pending[0] = d.version
			d.execute(ctx, 0)
			return nil, nil
		}
		d.pending[id] = d.version
		return []Message{{Op: OpReadyForTransition, Data: transitionData{id}}}, nil
	}
	return nil, nil
}

// epochKeys makes the frame keys of the session's current epoch.
func (d *DAVE) epochKeys() (*keys, error) {
	enc, err := d.session.Encryptor()
	if err != nil {
		return nil, err
	}
	k := &keys{enc: enc, dec: map[uint64]*dave.Decryptor{}}
	for _, id := range d.session.UserIDs() {
		if id == d.opts.UserID {
			continue
		}
		if k.dec[id], err = d.session.Decryptor(id); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (d *DAVE) execute(ctx context.Context, id uint16) {
	version, ok := d.pending[id]
	if !ok {
		d.opts.Logger.DebugContext(ctx, "dave execute transition without a pending one", "transition_id", id)
		return
	}
	delete(d.pending, id)
	d.version = version
	if k, ok := d.staged[id]; ok {
		d.previous, d.prevUntil = d.current, d.opts.Now().Add(previousKeysFor)
		d.current = k
		delete(d.staged, id)
	}
	if version == 0 {
		d.current = nil
	}
	d.opts.Logger.DebugContext(ctx, "dave transition executed", "transition_id", id, "protocol_version", version)
}

// ErrNoKeys is returned when DAVE is on but no transition has given keys
// yet.
var ErrNoKeys = errors.New("voice: no DAVE keys yet")

// Encrypt encrypts an outgoing Opus frame; with DAVE off (protocol
// version 0) it goes as it is.
func (d *DAVE) Encrypt(frame []byte) ([]byte, error) {
	if d.version == 0 {
		return frame, nil
	}
	if d.current == nil {
		return nil, ErrNoKeys
	}
	return d.current.enc.EncryptOpus(frame)
}

// Decrypt decrypts an Opus frame from userID; with DAVE off it is
// returned as it is.
func (d *DAVE) Decrypt(userID uint64, frame []byte) ([]byte, error) {
	if d.version == 0 {
		return frame, nil
	}
	if d.current == nil {
		return nil, ErrNoKeys
	}
	dec, ok := d.current.dec[userID]
	if !ok {
		return nil, fmt.Errorf("voice: no DAVE key for user %d", userID)
	}
	out, err := dec.Decrypt(frame)
	if err != nil && d.previous != nil && d.opts.Now().Before(d.prevUntil) {
		if old, ok := d.previous.dec[userID]; ok {
			if out, perr := old.Decrypt(frame); perr == nil {
				return out, nil
			}
		}
	}
	return out, err
}
