# Regenerates the Pillow references (run from this folder with Pillow installed):
#   python3 make.py ../../../TestSupport/photos
# Each reference is Pillow's Image.resize(..., Image.LANCZOS) of the fully decoded photo, saved losslessly as PNG
# (Pillow 13.0.0).
import io, sys
from PIL import Image, ImageCms
photos = sys.argv[1]
for name, width in (("grace_hopper", 128), ("retina", 64), ("hubble_deep_field", 256)):
    image = Image.open(f"{photos}/{name}.jpg").convert("RGB")
    height = round(image.height * width / image.width)
    image.resize((width, height), Image.LANCZOS).save(f"{name}-{width}.png")
    print(name, width, height, Image.__version__ if hasattr(Image, "__version__") else "")
# The Adobe RGB photo, converted to sRGB first (relative colorimetric, as TileCache and libvips do), then resized.
rocket = Image.open(f"{photos}/rocket.jpg")
source = ImageCms.ImageCmsProfile(io.BytesIO(rocket.info["icc_profile"]))
srgb = ImageCms.profileToProfile(rocket.convert("RGB"), source, ImageCms.createProfile("sRGB"),
                                 renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC)
srgb.resize((256, round(rocket.height * 256 / rocket.width)), Image.LANCZOS).save("rocket-256-srgb.png")
# The same photo resized first, then converted (the order of libvips' thumbnail and imgproxy, and TileCache's since
# 2026-11-28; generated with Pillow 12.3.0): rocket-256-resized-srgb.png.
resized = rocket.convert("RGB").resize((256, round(rocket.height * 256 / rocket.width)), Image.LANCZOS)
ImageCms.profileToProfile(resized, source, ImageCms.createProfile("sRGB"),
                          renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC).save("rocket-256-resized-srgb.png")
