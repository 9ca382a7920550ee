# Regenerates the Pillow references (run from this folder with Pillow installed):
#   python3 make.py ../../../TestSupport/photos
# Each reference is Pillow's Image.resize(..., Image.LANCZOS) of the fully decoded photo, saved losslessly as PNG.
import sys
from PIL import Image
photos = sys.argv[1]
for name, width in (("grace_hopper", 128), ("retina", 64), ("hubble_deep_field", 256)):
    image = Image.open(f"{photos}/{name}.jpg").convert("RGB")
    height = round(image.height * width / image.width)
    image.resize((width, height), Image.LANCZOS).save(f"{name}-{width}.png")
    print(name, width, height, Image.__version__ if hasattr(Image, "__version__") else "")
