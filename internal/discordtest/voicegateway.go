package discordtest

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/switchboardhq/switchboard/bots/discord/dave"
	"github.com/switchboardhq/switchboard/bots/discord/voice"
)

// VoiceServer is a fake Discord voice server (voice gateway version 8 and
// its UDP side, on loopback) with one other member already in the channel.
// It runs the handshake, then DAVE as Discord does: it is the group's
// external sender, the member (with a dave.Session of its own) commits the
// client's addition, the client gets the Welcome under a transition, and
// the transition is executed once the client is ready. Frames flow both
// ways: Speak sends one from the member, Heard gets those the member
// decrypted from the client.
type VoiceServer struct {
	URL       string // the ws:// endpoint
	Token     string
	ChannelID uint64
	MemberID  uint64

	t      testing.TB
	srv    *httptest.Server
	udp    *net.UDPConn
	secret []byte
	gw     *dave.ExternalSender

	mu         sync.Mutex
	member     *dave.Session
	client     netip.AddrPort // the client's UDP address
	clientID   uint64
	clientSSRC uint32
	transport  *voice.Transport // the member's sending side
	executed   bool
	seq        uint16
	heard      chan []byte
	errs       []error
}

const memberSSRC = 4242

// NewVoiceServer starts a fake voice server for channel with one member.
func NewVoiceServer(t testing.TB, channelID, memberID uint64) *VoiceServer {
	t.Helper()
	gw, err := dave.NewExternalSender()
	if err != nil {
		t.Fatal(err)
	}
	member, err := dave.NewSession(memberID, channelID)
	if err != nil {
		t.Fatal(err)
	}
	if err := member.SetExternalSender(gw.Package()); err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	v := &VoiceServer{Token: "voice-token", ChannelID: channelID, MemberID: memberID, t: t, udp: udp,
		secret: secret, gw: gw, member: member, heard: make(chan []byte, 64)}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serveWS))
	v.URL = "ws" + strings.TrimPrefix(v.srv.URL, "http") + "/?v=8"
	go v.serveUDP()
	t.Cleanup(func() {
		v.srv.Close()
		_ = udp.Close()
	})
	return v
}

func (v *VoiceServer) fail(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, err)
}

// Errors are the protocol errors the server saw from the client.
func (v *VoiceServer) Errors() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]error{}, v.errs...)
}

// Heard gets the frames the member decrypted from the client.
func (v *VoiceServer) Heard() <-chan []byte { return v.heard }

// Executed reports whether the DAVE transition adding the client ran.
func (v *VoiceServer) Executed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.executed
}

func (v *VoiceServer) serveUDP() {
	buf := make([]byte, 1500)
	for {
		n, from, err := v.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		pkt := buf[:n]
		if n == 74 && binary.BigEndian.Uint16(pkt) == 1 {
			ssrc := binary.BigEndian.Uint32(pkt[4:])
			v.mu.Lock()
			v.client = from
			v.mu.Unlock()
			_, _ = v.udp.WriteToUDPAddrPort(voice.DiscoveryResponse(ssrc, from), from)
			continue
		}
		v.mu.Lock()
		frame, err := v.openLocked(pkt)
		v.mu.Unlock()
		if err != nil {
			v.fail(fmt.Errorf("voice packet from the client: %w", err))
			continue
		}
		v.heard <- frame
	}
}

func (v *VoiceServer) openLocked(pkt []byte) ([]byte, error) {
	tr, err := voice.NewTransport(v.secret)
	if err != nil {
		return nil, err
	}
	p, err := tr.Open(pkt)
	if err != nil {
		return nil, err
	}
	if p.SSRC != v.clientSSRC {
		return nil, fmt.Errorf("SSRC %d, the client's is %d", p.SSRC, v.clientSSRC)
	}
	dec, err := v.member.Decryptor(v.clientID)
	if err != nil {
		return nil, err
	}
	return dec.Decrypt(p.Payload)
}

// Speak sends one Opus frame from the member to the client, DAVE- and
// transport-encrypted.
func (v *VoiceServer) Speak(frame []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	enc, err := v.member.Encryptor()
	if err != nil {
		return err
	}
	sealed, err := enc.EncryptOpus(frame)
	if err != nil {
		return err
	}
	pkt, err := v.transport.Seal(voice.RTPHeader(v.seq, uint32(v.seq)*960, memberSSRC), sealed)
	v.seq++
	if err != nil {
		return err
	}
	_, err = v.udp.WriteToUDPAddrPort(pkt, v.client)
	return err
}

var voiceUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

type voiceConn struct {
	ws  *websocket.Conn
	seq uint16
	mu  sync.Mutex
}

func (c *voiceConn) json(op int, d any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(map[string]any{"op": op, "d": d})
}

func (c *voiceConn) binary(op int, payload []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	msg := append(binary.BigEndian.AppendUint16(nil, c.seq), byte(op))
	return c.ws.WriteMessage(websocket.BinaryMessage, append(msg, payload...))
}

const addTransition = 1

func (v *VoiceServer) serveWS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("v") != "8" {
		http.Error(w, "voice gateway version 8 only", http.StatusBadRequest)
		return
	}
	ws, err := voiceUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	c := &voiceConn{ws: ws}
	if err := c.json(voice.OpHello, map[string]any{"heartbeat_interval": 500}); err != nil {
		return
	}
	for {
		typ, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if typ == websocket.BinaryMessage {
			if err := v.binaryFromClient(c, msg); err != nil {
				v.fail(err)
			}
			continue
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if err := json.Unmarshal(msg, &p); err != nil {
			v.fail(err)
			continue
		}
		if err := v.jsonFromClient(c, p.Op, p.D); err != nil {
			v.fail(err)
		}
	}
}

func (v *VoiceServer) jsonFromClient(c *voiceConn, op int, d json.RawMessage) error {
	switch op {
	case voice.OpIdentify:
		var id struct {
			ServerID  string `json:"server_id"`
			UserID    string `json:"user_id"`
			SessionID string `json:"session_id"`
			Token     string `json:"token"`
			MaxDAVE   int    `json:"max_dave_protocol_version"`
		}
		if err := json.Unmarshal(d, &id); err != nil {
			return err
		}
		if id.Token != v.Token || id.MaxDAVE < 1 || id.ServerID == "" || id.SessionID == "" {
			return fmt.Errorf("identify: token %q, server_id %q, session_id %q, max_dave_protocol_version %d", id.Token, id.ServerID, id.SessionID, id.MaxDAVE)
		}
		uid, err := strconv.ParseUint(id.UserID, 10, 64)
		if err != nil {
			return err
		}
		v.mu.Lock()
		v.clientID, v.clientSSRC = uid, 7
		v.mu.Unlock()
		port := v.udp.LocalAddr().(*net.UDPAddr).Port
		return c.json(voice.OpReady, map[string]any{"ssrc": 7, "ip": "127.0.0.1", "port": port, "modes": []string{voice.EncryptionMode}})
	case voice.OpSelectProtocol:
		var sp struct {
			Protocol string
			Data     struct{ Mode string }
		}
		if err := json.Unmarshal(d, &sp); err != nil {
			return err
		}
		if sp.Protocol != "udp" || sp.Data.Mode != voice.EncryptionMode {
			return fmt.Errorf("select protocol: %s %s", sp.Protocol, sp.Data.Mode)
		}
		key := make([]int, len(v.secret))
		for i, b := range v.secret {
			key[i] = int(b)
		}
		tr, err := voice.NewTransport(v.secret)
		if err != nil {
			return err
		}
		v.mu.Lock()
		v.transport = tr
		v.mu.Unlock()
		if err := c.json(voice.OpSessionDescription, map[string]any{"mode": voice.EncryptionMode, "secret_key": key, "dave_protocol_version": 1}); err != nil {
			return err
		}
		if err := c.json(voice.OpClientsConnect, map[string]any{"user_ids": []string{strconv.FormatUint(v.MemberID, 10)}}); err != nil {
			return err
		}
		if err := c.json(voice.OpSpeaking, map[string]any{"user_id": strconv.FormatUint(v.MemberID, 10), "ssrc": memberSSRC, "speaking": 1}); err != nil {
			return err
		}
		return c.binary(voice.OpMLSExternalSender, v.gw.Package())
	case voice.OpHeartbeat:
		var hb struct {
			T int64 `json:"t"`
		}
		if err := json.Unmarshal(d, &hb); err != nil {
			return err
		}
		return c.json(voice.OpHeartbeatAck, map[string]any{"t": hb.T})
	case voice.OpReadyForTransition:
		var tr struct {
			TransitionID int `json:"transition_id"`
		}
		if err := json.Unmarshal(d, &tr); err != nil {
			return err
		}
		if tr.TransitionID != addTransition {
			return fmt.Errorf("ready for transition %d", tr.TransitionID)
		}
		v.mu.Lock()
		v.executed = true
		v.mu.Unlock()
		return c.json(voice.OpExecuteTransition, map[string]any{"transition_id": addTransition})
	case voice.OpSpeaking:
		return nil
	case voice.OpMLSInvalidCommitWelcome:
		return fmt.Errorf("the client flagged an invalid commit or welcome: %s", d)
	}
	return fmt.Errorf("unexpected opcode %d from the client", op)
}

// binaryFromClient takes the client's key package: the member commits its
// addition, and the client gets the Welcome.
func (v *VoiceServer) binaryFromClient(c *voiceConn, msg []byte) error {
	if len(msg) < 1 || msg[0] != voice.OpMLSKeyPackage {
		return fmt.Errorf("unexpected binary message from the client: %x", msg[:min(len(msg), 8)])
	}
	v.mu.Lock()
	epoch, _ := v.member.Epoch()
	add, err := v.gw.ProposeAdd(v.ChannelID, epoch, msg[1:])
	if err != nil {
		v.mu.Unlock()
		return err
	}
	commit, welcome, err := v.member.ProcessProposals(dave.ProposalsAppend(add), []uint64{v.MemberID, v.clientID})
	if err == nil {
		err = v.member.ProcessCommit(commit)
	}
	v.mu.Unlock()
	if err != nil {
		return fmt.Errorf("the member committing the client's addition: %w", err)
	}
	return c.binary(voice.OpMLSWelcome, append(binary.BigEndian.AppendUint16(nil, addTransition), welcome...))
}
