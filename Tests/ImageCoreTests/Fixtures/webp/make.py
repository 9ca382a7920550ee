# Regenerates the WebP files ImageInspectorTests decodes (run from this folder with Pillow installed: python3 make.py).
# One of each container and codec libwebp writes: VP8 (lossy), VP8L (lossless), VP8X with an ALPH chunk (lossy with
# alpha), VP8L with alpha, and an animation (VP8X, ANIM, 20 ANMF frames: more than 16, the inspector's work factor).
from PIL import Image

width, height = 32, 24
rgb = Image.new("RGB", (width, height))
rgb.putdata([(x * 8, y * 10, (x + y) * 4) for y in range(height) for x in range(width)])
rgba = rgb.convert("RGBA")
rgba.putalpha(Image.linear_gradient("L").resize((width, height)))
rgb.save("lossy.webp", quality=80)
rgb.save("lossless.webp", lossless=True)
rgba.save("alpha.webp", quality=80)
rgba.save("alpha-lossless.webp", lossless=True)
frames = [Image.new("RGB", (16, 16), (index * 12, 255 - index * 12, 128)) for index in range(20)]
frames[0].save("animated.webp", save_all=True, append_images=frames[1:], duration=50, loop=0, lossless=True)
