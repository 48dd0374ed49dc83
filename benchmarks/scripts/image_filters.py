"""A noisy disc blurred by a separable 3-tap box filter (slices), then Sobel edges."""

from __future__ import annotations

from typing import Any

#: image side in pixels
SIZES = {"small": 128, "large": 128 * 4}
RTOL, ATOL = 1e-9, 1e-10


def box_blur(np: Any, img: Any) -> Any:
    """A 3x3 box blur done as two 3-tap passes, the border left as it is."""
    tmp = img.copy()
    tmp[:, 1:-1] = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    out = tmp.copy()
    out[1:-1, :] = (tmp[:-2, :] + tmp[1:-1, :] + tmp[2:, :]) / 3
    return out


def sobel(np: Any, img: Any) -> Any:
    """The gradient magnitude of the interior pixels."""
    gx = ((img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:])
          - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2]))
    gy = ((img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:])
          - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:]))
    return np.sqrt(gx**2 + gy**2)


def run(np: Any, n: int) -> Any:
    """The edge magnitude after three blurs, and how many pixels are edges."""
    np.random.seed(11)
    x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n))
    img = (x**2 + y**2 < 0.5).astype(float)
    img = img + 0.2 * np.random.randn(n, n)
    img = np.clip(img, 0, 1)

    for _ in range(3):
        img = box_blur(np, img)
    mag = sobel(np, img)
    mag = mag / mag.max()
    edges = mag > mag.mean() + 2 * mag.std()
    return mag, int(edges.sum())
