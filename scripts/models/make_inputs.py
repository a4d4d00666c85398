#!/usr/bin/env python3
"""Makes the model tests' inputs from real data: the shared photographs, text rendered with
DejaVu Sans (so the ground truth is known) and speech synthesized by espeak-ng.

For every model it writes models/testdata/<model>/:
  <input>.npy   one file per model input (names sanitized like `kiln run` does)
  case.json     {"model": "<model>.onnx", "inputs": {onnx input name: file}, "sanity": {...}}
The "sanity" part is what tests/models/compare.py checks on kiln's outputs beyond matching ONNX
Runtime (the text that was rendered, which image is a face, ...).

Usage: make_inputs.py MODELS_DIR   (run by scripts/fetch_models.sh; idempotent)
"""
import io
import json
import re
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO.parent / "shared" / "data" / "images"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)

# The line the recognizer must read back exactly, and the one the classifier sees upright and
# upside down. The Chinese PP-OCR alphabet has ASCII letters, digits and punctuation.
REC_TEXT = "Kiln 2024: real models, 7 tests!"
CLS_TEXT = "Orientation 0 and 180"
DET_LINES = ["kiln reads this page", "ONNX models 12345"]
SPEECH = "Hello, this is a voice activity detection test for kiln."


def load_rgb(name: str) -> Image.Image:
    return Image.open(IMAGES / name).convert("RGB")


def to_chw(img: Image.Image, mean, std) -> np.ndarray:
    x = np.asarray(img, np.float32) / 255.0
    x = (x - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def imagenet(name: str) -> np.ndarray:
    """torchvision's classification preprocessing: resize short side to 256, center crop 224."""
    img = load_rgb(name)
    scale = 256 / min(img.size)
    img = img.resize((round(img.width * scale), round(img.height * scale)), Image.BILINEAR)
    left, top = (img.width - 224) // 2, (img.height - 224) // 2
    return to_chw(img.crop((left, top, left + 224, top + 224)), IMAGENET_MEAN, IMAGENET_STD)


def render_line(text: str, size: int = 40) -> Image.Image:
    """Black text on white, tightly cropped with a small margin."""
    font = ImageFont.truetype(str(FONT), size)
    left, top, right, bottom = font.getbbox(text)
    pad = size // 4
    img = Image.new("RGB", (right - left + 2 * pad, bottom - top + 2 * pad), "white")
    ImageDraw.Draw(img).text((pad - left, pad - top), text, font=font, fill="black")
    return img


def ocr_line(img: Image.Image, width: int) -> np.ndarray:
    """PP-OCR rec/cls preprocessing: height 48, keep the ratio, right-pad with 0 up to width."""
    w = min(width, max(1, round(img.width * 48 / img.height)))
    x = np.asarray(img.resize((w, 48), Image.BILINEAR), np.float32) / 255.0
    x = (x - 0.5) / 0.5
    out = np.zeros((3, 48, width), np.float32)
    out[:, :, :w] = x.transpose(2, 0, 1)
    return out


def det_page():
    """A real photograph with a white label of rendered text on it, resized so both sides are
    multiples of 32. Returns the NCHW input and the label's text boxes in input pixels."""
    img = load_rgb("china.jpg").resize((640, 448), Image.BILINEAR)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT), 28)
    draw.rectangle((40, 300, 440, 420), fill="white")
    boxes = []
    for i, line in enumerate(DET_LINES):
        x, y = 60, 315 + 50 * i
        box = draw.textbbox((x, y), line, font=font)
        draw.text((x, y), line, font=font, fill="black")
        boxes.append([int(v) for v in box])
    x = to_chw(img, IMAGENET_MEAN, IMAGENET_STD)[None]
    # Empty parts of the label: right of the text and the band between the lines.
    blank = [[max(b[2] for b in boxes) + 16, 305, 436, 416]]
    return x, {"text_boxes": boxes, "blank_boxes": blank}


def blazeface_input(name: str, box) -> np.ndarray:
    img = load_rgb(name).crop(box).resize((128, 128), Image.BILINEAR)
    x = np.asarray(img, np.float32) / 127.5 - 1.0
    return x[None]  # NHWC


def speech_16k() -> np.ndarray:
    """espeak-ng speaks SPEECH to a wav (22050 Hz), resampled here to 16 kHz in [-1, 1]."""
    with tempfile.TemporaryDirectory() as tmp:
        wav_path = Path(tmp) / "speech.wav"
        subprocess.run(["espeak-ng", "-w", str(wav_path), SPEECH], check=True)
        with wave.open(str(wav_path)) as w:
            rate, frames = w.getframerate(), w.readframes(w.getnframes())
            assert w.getsampwidth() == 2 and w.getnchannels() == 1
    x = np.frombuffer(frames, "<i2").astype(np.float32) / 32768.0
    # Band-limit with a short windowed-sinc low-pass at 7.6 kHz before linear resampling.
    taps = np.arange(-32, 33)
    cutoff = 7600 / rate
    kernel = 2 * cutoff * np.sinc(2 * cutoff * taps) * np.hamming(len(taps))
    x = np.convolve(x, kernel / kernel.sum(), mode="same")
    t = np.arange(0, len(x) * 16000 // rate) * (rate / 16000)
    return np.interp(t, np.arange(len(x)), x).astype(np.float32)


def silero_inputs():
    """Two windows in one batch: the loudest speech window and a near-silent one. Silero VAD v5
    takes 512 new samples at 16 kHz plus the 64 samples before them as context (576 in all)."""
    audio = speech_16k()
    window, context = 512, 64
    starts = np.arange(context, len(audio) - window, window)
    energy = np.array([np.mean(audio[s:s + window] ** 2) for s in starts])
    loud, quiet = starts[np.argmax(energy)], starts[np.argmin(energy)]
    chunk = np.stack([audio[s - context:s + window] for s in (loud, quiet)]).astype(np.float32)
    inputs = {
        "input": chunk,
        "state": np.zeros((2, 2, 128), np.float32),
        "sr": np.array(16000, np.int64),
    }
    sanity = {"speech_rows": [0], "silence_rows": [1],
              "rms": [float(np.sqrt(np.mean(c ** 2))) for c in chunk]}
    return inputs, sanity


def cases():
    yield "resnet50", {"input": np.stack([imagenet("squirrel_cls.jpg"), imagenet("LadyBird.jpg")])}, {}
    yield "mobilenetv2", {"input": np.stack([imagenet("squirrel_cls.jpg"), imagenet("flower.jpg")])}, {}

    det, det_sanity = det_page()
    yield "ppocr_det", {"x": det}, det_sanity

    yield "ppocr_rec", {"x": ocr_line(render_line(REC_TEXT), 480)[None]}, {"text": REC_TEXT}

    upright = render_line(CLS_TEXT)
    cls = np.stack([ocr_line(upright, 192), ocr_line(upright.rotate(180), 192)])
    yield "ppocr_cls", {"x": cls}, {"labels": [0, 1]}  # class 0 is 0 degrees, 1 is 180

    # camera.png is the "cameraman": the crop is his head, in profile behind the camera.
    yield "blazeface", {"input:0": blazeface_input("camera.png", (100, 20, 360, 280))}, {"face": True}

    yield ("silero_vad", *silero_inputs())


def file_name(input_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", input_name) + ".npy"


def write_if_changed(path: Path, data: bytes) -> None:
    """Keeps the file's time when nothing changed, so cached ORT outputs stay valid."""
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main() -> None:
    models = Path(sys.argv[1])
    for name, inputs, sanity in cases():
        out = models / "testdata" / name
        out.mkdir(parents=True, exist_ok=True)
        files = {k: file_name(k) for k in inputs}
        for k, v in inputs.items():
            buf = io.BytesIO()
            np.save(buf, v)
            write_if_changed(out / files[k], buf.getvalue())
        case = {"model": f"{name}.onnx", "inputs": files, "sanity": sanity}
        write_if_changed(out / "case.json", (json.dumps(case, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
