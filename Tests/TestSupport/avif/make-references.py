# Regenerates pillow/*.png, the reference pixels AVIFCodecTests compares TileCache's AVIF decoding with: the first frame
# of every file here that Pillow opens, as Pillow 13.0.0 (its wheel's libavif 1.4.2 with dav1d) decodes it, in the
# stored orientation (irot/imir are not applied) and Pillow's mode (RGB, or RGBA with alpha). Files above 400,000 pixels
# get none, to keep the repository small (they are in the verdict corpus all the same). Run from this folder:
#   ../../../.build/verdict-venv/bin/python make-references.py
import os

from PIL import Image

os.makedirs("pillow", exist_ok=True)
for name in sorted(os.listdir(".")):
    if not name.endswith(".avif"):
        continue
    try:
        with Image.open(name) as image:
            image.load()
            if image.width * image.height > 400_000:
                continue
            image.save(os.path.join("pillow", name[:-5] + ".png"))
    except Exception as error:  # Pillow raises many types for files libavif refuses
        print(f"{name}: Pillow refuses it ({error}); no reference")
