// The microphone's capture processor: the context's audio, downmixed to
// its first channel, resampled to 16 kHz (averaging the input samples each
// output sample covers, a box filter that keeps what speech needs) and
// sent to the page as 20 ms frames of 16-bit PCM with their RMS level.
const RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz

class PCM16Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / RATE; // input samples per output sample
    this.pos = 0;
    this.acc = 0;
    this.count = 0;
    this.out = new Int16Array(FRAME);
    this.n = 0;
    this.sq = 0;
  }

  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (!ch) return true;
    for (let i = 0; i < ch.length; i++) {
      this.acc += ch[i];
      this.count++;
      this.pos += 1;
      if (this.pos < this.step) continue;
      this.pos -= this.step;
      const v = Math.max(-1, Math.min(1, this.acc / this.count));
      this.acc = 0;
      this.count = 0;
      this.out[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      this.sq += v * v;
      if (this.n === FRAME) {
        const pcm = this.out.buffer;
        this.port.postMessage({ pcm, rms: Math.sqrt(this.sq / FRAME) }, [pcm]);
        this.out = new Int16Array(FRAME);
        this.n = 0;
        this.sq = 0;
      }
    }
    return true;
  }
}

registerProcessor("pcm16-capture", PCM16Capture);
