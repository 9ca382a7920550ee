# Regenerates the PNGs with an embedded Adobe RGB (1998) profile (run from this folder with Pillow installed):
#   python3 make.py ../../../TestSupport/photos/rocket.jpg
# The profile is the one a real camera photo (rocket.jpg) carries; the patches are the Adobe RGB numbers
# ColorProfileTests expects to land near their sRGB values. PNG writes the profile as an iCCP chunk.
import sys
from PIL import Image
profile = Image.open(sys.argv[1]).info["icc_profile"]
colors = [(200, 100, 50), (50, 160, 90), (128, 64, 32), (230, 230, 230)]
rgb = Image.new("RGB", (16 * len(colors), 16))
rgba = Image.new("RGBA", (16 * len(colors), 16))
for index, color in enumerate(colors):
    rgb.paste(color, (16 * index, 0, 16 * index + 16, 16))
    rgba.paste(color + (200,), (16 * index, 0, 16 * index + 16, 16))
rgb.save("adobe-patches.png", icc_profile=profile)
rgba.save("adobe-patches-rgba.png", icc_profile=profile)
