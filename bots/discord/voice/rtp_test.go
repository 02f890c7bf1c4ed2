package voice

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"testing"
)

func TestTransportRoundTrip(t *testing.T) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	send, err := NewTransport(key)
	if err != nil {
		t.Fatal(err)
	}
	recv, err := NewTransport(key)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("dave frame")
	pkt, err := send.Seal(RTPHeader(7, 960, 1234), payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkt) != 12+len(payload)+16+4 || binary.BigEndian.Uint32(pkt[len(pkt)-4:]) != 1 {
		t.Fatalf("packet layout: %x", pkt)
	}
	got, err := recv.Open(pkt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sequence != 7 || got.Timestamp != 960 || got.SSRC != 1234 || !bytes.Equal(got.Payload, payload) {
		t.Fatalf("opened %+v", got)
	}
	for i := range pkt {
		bad := bytes.Clone(pkt)
		bad[i] ^= 0x01
		if p, err := recv.Open(bad); err == nil {
			t.Errorf("byte %d changed, still opened: %+v", i, p)
		}
	}
	if _, err := NewTransport(key[:16]); err == nil {
		t.Error("took a 16-byte key")
	}
}

// TestTransportHeaderExtension opens a packet whose header has an
// extension: the preamble is clear, the extension body is encrypted with
// the payload and removed after.
func TestTransportHeaderExtension(t *testing.T) {
	key := make([]byte, 32)
	tr, err := NewTransport(key)
	if err != nil {
		t.Fatal(err)
	}
	header := RTPHeader(1, 2, 3)
	header[0] |= 0x10
	header = append(header, 0xbe, 0xde, 0, 1) // one 32-bit word of extension
	body := append([]byte{0x10, 0xff, 0, 0}, []byte("payload")...)
	nonce := make([]byte, 12)
	binary.BigEndian.PutUint32(nonce, 9)
	pkt := append(bytes.Clone(header), tr.aead.Seal(nil, nonce, body, header)...)
	pkt = binary.BigEndian.AppendUint32(pkt, 9)
	got, err := tr.Open(pkt)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Payload) != "payload" {
		t.Fatalf("payload %q", got.Payload)
	}
}

func TestIPDiscovery(t *testing.T) {
	req := DiscoveryRequest(42)
	if len(req) != 74 || binary.BigEndian.Uint32(req[4:]) != 42 {
		t.Fatalf("request %x", req)
	}
	want := netip.MustParseAddrPort("127.0.0.1:50000")
	got, err := ParseDiscoveryResponse(DiscoveryResponse(42, want), 42)
	if err != nil || got != want {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseDiscoveryResponse(DiscoveryResponse(42, want), 43); err == nil {
		t.Error("took a response for another SSRC")
	}
	if _, err := ParseDiscoveryResponse(req, 42); err == nil {
		t.Error("took a request as a response")
	}
}
