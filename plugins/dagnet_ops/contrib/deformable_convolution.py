"""``_contrib_DeformableConvolution`` and ``_contrib_ModulatedDeformableConvolution``
(MXNet's ``deformable_convolution.cc`` and ``modulated_deformable_convolution.cc``:
deformable convolution, Dai et al. 2017, and its modulated form, DCN v2).

A 2-D convolution whose every kernel tap reads the input at its usual place plus a
learned offset: ``offset`` (N, G * 2 * kh * kw, Ho, Wo) holds, for each of the
``num_deformable_group`` groups G of input channels and each tap, the (dy, dx) shift at
each output position.  The input is read there by bilinear interpolation: a point
outside (-1, H) x (-1, W) reads 0, and so does each of its four neighbours that lies
outside the map.  The modulated form multiplies each sample by ``mask`` (N, G * kh *
kw, Ho, Wo).  The samples then meet the weight as in ``Convolution`` (``num_group``
groups, bias unless ``no_bias``).  Gradients: data (the samples' weights, spread
back), offset (the interpolation's slope), mask, weight and bias.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape

from .._draw import Draw
from ._common import contrib_error, put, scatter_add

__all__ = ["OPS"]


class DeformableConvolutionParam(Params):
    kernel = Field(Shape, REQUIRED, "Convolution kernel size: (h, w) or (d, h, w)")
    stride = Field(Shape, (), "Convolution stride: (h, w) or (d, h, w). Defaults to 1 for "
                              "each dimension.")
    dilate = Field(Shape, (), "Convolution dilate: (h, w) or (d, h, w). Defaults to 1 for "
                              "each dimension.")
    pad = Field(Shape, (), "Zero pad for convolution: (h, w) or (d, h, w). Defaults to no "
                           "padding.")
    num_filter = Field(int, REQUIRED, "Convolution filter(channel) number", low=1)
    num_group = Field(int, 1, "Number of group partitions.", low=1)
    num_deformable_group = Field(int, 1, "Number of deformable group partitions.", low=1)
    workspace = Field(int, 1024, "Maximum temperal workspace allowed for convolution (MB).",
                      low=0)
    no_bias = Field(bool, False, "Whether to disable bias parameter.")
    layout = Field(str, None, "Set layout for input, output and weight. Empty for default "
                              "layout: NCW for 1d, NCHW for 2d and NCDHW for 3d.",
                   choices=("NCW", "NCHW", "NCDHW"))


class ModulatedDeformableConvolutionParam(DeformableConvolutionParam):
    im2col_step = Field(int, 64, "Maximum number of images per im2col computation (accepted "
                                 "for MXNet compatibility)", low=0)


def _names(modulated: bool):
    def names(attrs):
        inputs = ["data", "offset"] + (["mask"] if modulated else []) + ["weight"]
        return inputs if attrs.no_bias else inputs + ["bias"]

    return names


def _geometry(op, attrs):
    kernel = tuple(attrs.kernel)
    if len(kernel) != 2:
        raise contrib_error(op, f"kernel={kernel}: only 2-D deformable convolution exists")
    if attrs.layout not in (None, "NCHW"):
        raise contrib_error(op, f"layout={attrs.layout!r}: only NCHW data is supported")

    def two(value, fill, name):
        value = tuple(value) or (fill, fill)
        if len(value) != 2:
            raise contrib_error(op, f"{name}={value} must have 2 entries like the kernel")
        return value

    return (kernel, two(attrs.stride, 1, "stride"), two(attrs.dilate, 1, "dilate"),
            two(attrs.pad, 0, "pad"))


def _out_size(size, k, s, d, p):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _infer(op, modulated):
    def infer(attrs, ins, outs):
        (kh, kw), stride, dilate, pad = _geometry(op, attrs)
        data = ins[0]
        if data is None:
            return ins, outs
        if len(data) != 4:
            raise contrib_error(op, f"data must be (N, C, H, W), got {tuple(data)}")
        n, c, h, w = data
        f, ng, g = attrs.num_filter, attrs.num_group, attrs.num_deformable_group
        if c % ng or f % ng:
            raise contrib_error(op, f"{c} input channels and num_filter={f} must both be "
                                    f"divisible by num_group={ng}")
        if c % g:
            raise contrib_error(op, f"{c} input channels must be divisible by "
                                    f"num_deformable_group={g}")
        ho = _out_size(h, kh, stride[0], dilate[0], pad[0])
        wo = _out_size(w, kw, stride[1], dilate[1], pad[1])
        if ho < 1 or wo < 1:
            raise contrib_error(op, f"the dilated kernel does not fit the padded input "
                                    f"{tuple(data)}")
        shapes = [tuple(data), (n, g * 2 * kh * kw, ho, wo)]
        if modulated:
            shapes.append((n, g * kh * kw, ho, wo))
        shapes.append((f, c // ng, kh, kw))
        if not attrs.no_bias:
            shapes.append((f,))
        for given, want in zip(ins, shapes):
            if given is not None and 0 not in given and tuple(given) != want:
                raise contrib_error(op, f"an input has shape {tuple(given)} where {want} is "
                                        f"needed (data {tuple(data)}, kernel {(kh, kw)})")
        return shapes, [(n, f, ho, wo)]

    return infer


def _positions(xp, attrs, op, offset):
    """Sampling rows and columns, (N, G, K, Ho, Wo) each."""
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geometry(op, attrs)
    n, _, ho, wo = offset.shape
    g = attrs.num_deformable_group
    off = offset.reshape(n, g, kh * kw, 2, ho, wo)
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(ho) * sh - ph)[:, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(wo) * sw - pw)
    rows = np.broadcast_to(rows, (kh, kw, ho, wo)).reshape(kh * kw, ho, wo)
    cols = np.broadcast_to(cols, (kh, kw, ho, wo)).reshape(kh * kw, ho, wo)
    return (off[:, :, :, 0] + xp.asarray(rows, dtype=offset.dtype),
            off[:, :, :, 1] + xp.asarray(cols, dtype=offset.dtype))


_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _corners(xp, y, x, height, width, modulated):
    """Per corner: (row, column, weight, inside, d weight/dy, d weight/dx).

    The modulated operator (DCN v2) reads points in (-1, H) x (-1, W), each neighbour
    outside the map counting 0; MXNet's CPU deformable convolution reads points in
    [0, H) x [0, W), a point in the last row or column sticking to it."""
    if modulated:
        valid = (y > -1) & (x > -1) & (y < height) & (x < width)
    else:
        valid = (y >= 0) & (x >= 0) & (y < height) & (x < width)
    y0, x0 = xp.floor(y), xp.floor(x)
    ly, lx = y - y0, x - x0
    y0, x0 = y0.astype(np.int64), x0.astype(np.int64)
    free_y = free_x = 1
    if not modulated:  # the last row and column: no interpolation, no slope
        edge_y, edge_x = y0 >= height - 1, x0 >= width - 1
        ly, lx = xp.where(edge_y, 0.0, ly), xp.where(edge_x, 0.0, lx)
        free_y, free_x = ~edge_y, ~edge_x
    for dy, dx in _CORNERS:
        rows, cols = y0 + dy, x0 + dx
        inside = valid & (rows >= 0) & (cols >= 0)
        if modulated:
            inside = inside & (rows <= height - 1) & (cols <= width - 1)
        wy, wx = (ly if dy else 1 - ly), (lx if dx else 1 - lx)
        gy, gx = (1 if dy else -1) * wx * free_y, (1 if dx else -1) * wy * free_x
        yield (xp.clip(rows, 0, height - 1), xp.clip(cols, 0, width - 1), wy * wx,
               inside, gy, gx)


def _gather(xp, xg, rows, cols):
    """``xg[n, g, :, rows, cols]`` for every (N, G, K, Ho, Wo) position: (..., Cg)."""
    n, g = xg.shape[:2]
    ni = xp.arange(n).reshape(n, 1, 1, 1, 1)
    gi = xp.arange(g).reshape(1, g, 1, 1, 1)
    return xg[ni, gi, :, rows, cols], (ni, gi)


def _columns(xp, attrs, op, x, offset, mask):
    """Samples (N, G, K, Ho, Wo, Cg), unmasked samples, and the positions used."""
    n, c, h, w = x.shape
    g = attrs.num_deformable_group
    xg = x.reshape(n, g, c // g, h, w)
    y, xs = _positions(xp, attrs, op, offset)
    samples = 0
    parts = []
    for rows, cols, weight, inside, gy, gx in _corners(xp, y, xs, h, w, mask is not None):
        values, where = _gather(xp, xg, rows, cols)
        values = values * (weight * inside)[..., None]
        samples = samples + values
        parts.append((rows, cols, weight, inside, gy, gx, where))
    masked = samples * _mask(mask, n, g)[..., None] if mask is not None else samples
    return masked, samples, parts


def _mask(mask, n, g):
    return mask.reshape(n, g, -1, *mask.shape[2:])


def _to_matrix(cols, attrs):
    """(N, G, K, Ho, Wo, Cg) samples as (N, num_group, C/num_group * K, Ho * Wo)."""
    n, g, k, ho, wo, cg = cols.shape
    ng = attrs.num_group
    m = cols.transpose(0, 1, 5, 2, 3, 4).reshape(n, g * cg * k, ho * wo)
    return m.reshape(n, ng, (g * cg * k) // ng, ho * wo)


def _split(op, modulated, inputs):
    x, offset = inputs[0], inputs[1]
    mask = inputs[2] if modulated else None
    rest = inputs[3 if modulated else 2:]
    return x, offset, mask, rest[0], (rest[1] if len(rest) > 1 else None)


def _kernel(op, modulated):
    def forward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        x, offset, mask, weight, bias = _split(op, modulated, inputs)
        cols, _, _ = _columns(xp, attrs, op, x, offset, mask)
        ng, f = attrs.num_group, attrs.num_filter
        wm = weight.reshape(ng, f // ng, -1)
        out = xp.einsum("gfk,ngkl->ngfl", wm, _to_matrix(cols, attrs))
        n, _, ho, wo = offset.shape
        out = out.reshape(n, f, ho, wo)
        if bias is not None:
            out = out + bias.reshape(1, -1, 1, 1)
        put(outputs[0], req[0], out)

    def backward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        dy = inputs[0]
        x, offset, mask, weight, bias = _split(op, modulated, inputs[1:])
        n, c, h, w = x.shape
        g, ng, f = attrs.num_deformable_group, attrs.num_group, attrs.num_filter
        cols, samples, parts = _columns(xp, attrs, op, x, offset, mask)
        _, _, k, ho, wo, cg = cols.shape
        dym = dy.reshape(n, ng, f // ng, ho * wo)
        wm = weight.reshape(ng, f // ng, -1)
        dweight = xp.einsum("ngfl,ngkl->gfk", dym, _to_matrix(cols, attrs))
        dcols = xp.einsum("gfk,ngfl->ngkl", wm, dym).reshape(n, g, cg, k, ho, wo)
        dcols = dcols.transpose(0, 1, 3, 4, 5, 2)                   # (N, G, K, Ho, Wo, Cg)
        m = _mask(mask, n, g)[..., None] if mask is not None else 1
        dsample = dcols * m
        dx = xp.zeros((n, g, cg, h, w), dtype=x.dtype)
        dpos_y = dpos_x = 0
        xg = x.reshape(n, g, cg, h, w)
        for rows, cols_, weight_, inside, gy, gx, (ni, gi) in parts:
            scatter_add(xp, dx, (ni, gi, slice(None), rows, cols_),
                        dsample * (weight_ * inside)[..., None])
            values = xg[ni, gi, :, rows, cols_] * inside[..., None]
            slope = (dsample * values).sum(axis=-1)
            dpos_y = dpos_y + slope * gy
            dpos_x = dpos_x + slope * gx
        grads = [dx.reshape(x.shape),
                 xp.stack([dpos_y, dpos_x], axis=3).reshape(offset.shape)]
        if modulated:
            grads.append((dcols * samples).sum(axis=-1).reshape(mask.shape))
        grads.append(dweight.reshape(weight.shape))
        if bias is not None:
            grads.append(dy.sum(axis=(0, 2, 3)))
        for out, r, value in zip(outputs, req, grads):
            put(out, r, value)

    return forward, backward


def _sample(modulated):
    def sample(draw):
        d = Draw(draw)
        g, ng = d.choice([1, 2]), d.choice([1, 2])
        c = g * ng * d.int(1, 2)
        f = ng * d.int(1, 2)
        kh, kw = d.int(1, 3), d.int(1, 3)
        h, w = d.int(kh, 4), d.int(kw, 4)
        params = {"kernel": (kh, kw), "num_filter": f, "num_group": ng,
                  "num_deformable_group": g, "no_bias": d.bool(),
                  "pad": (d.int(0, 1), d.int(0, 1)), "dilate": (1, d.int(1, 2))}
        if (w + 2 * params["pad"][1] - (params["dilate"][1] * (kw - 1) + 1)) < 0:
            params["dilate"] = (1, 1)
        ho = _out_size(h, kh, 1, 1, params["pad"][0])
        wo = _out_size(w, kw, 1, params["dilate"][1], params["pad"][1])
        k = kh * kw
        # offsets an integer plus a fraction in [0.2, 0.8]: clear of the interpolation's kinks
        offset = d.rng.integers(-1, 2, (1, g * 2 * k, ho, wo)) + \
            d.uniform((1, g * 2 * k, ho, wo), 0.2, 0.8)
        inputs = [d.uniform((1, c, h, w)), offset]
        if modulated:
            inputs.append(d.uniform((1, g * k, ho, wo), 0.2, 1.0))
        inputs.append(d.uniform((f, c // ng, kh, kw)))
        if not params["no_bias"]:
            inputs.append(d.uniform((f,)))
        return Case(inputs, params)

    return sample


def _reference(op, modulated, params_class):
    def reference(raw, *inputs):
        attrs = params_class.parse(op, raw)
        x, offset, mask, weight, bias = _split(op, modulated, list(inputs))
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _geometry(op, attrs)
        n, c, h, w = x.shape
        g, ng, f = attrs.num_deformable_group, attrs.num_group, attrs.num_filter
        _, _, ho, wo = offset.shape
        out = np.zeros((n, f, ho, wo))
        for b in range(n):
            for oy in range(ho):
                for ox in range(wo):
                    cols = np.zeros((c, kh * kw))
                    for ci in range(c):
                        gi = ci // (c // g)
                        for t in range(kh * kw):
                            yy = oy * sh - ph + (t // kw) * dh + offset[b, gi * 2 * kh * kw + 2 * t,
                                                                         oy, ox]
                            xx = ox * sw - pw + (t % kw) * dw + offset[b, gi * 2 * kh * kw
                                                                       + 2 * t + 1, oy, ox]
                            v = _point(x[b, ci], yy, xx, modulated)
                            if modulated:
                                v *= mask[b, gi * kh * kw + t, oy, ox]
                            cols[ci, t] = v
                    per = c // ng
                    for fi in range(f):
                        gg = fi // (f // ng)
                        out[b, fi, oy, ox] = (weight[fi].reshape(per, -1)
                                              * cols[gg * per:(gg + 1) * per]).sum()
        if bias is not None:
            out += bias.reshape(1, -1, 1, 1)
        return out

    return reference


def _point(plane, y, x, modulated):
    h, w = plane.shape
    if modulated:
        if not (y > -1 and x > -1 and y < h and x < w):
            return 0.0
        y0, x0 = int(np.floor(y)), int(np.floor(x))
        ly, lx = y - y0, x - x0
        total = 0.0
        for dy, dx in _CORNERS:
            r, c = y0 + dy, x0 + dx
            if 0 <= r <= h - 1 and 0 <= c <= w - 1:
                total += (ly if dy else 1 - ly) * (lx if dx else 1 - lx) * plane[r, c]
        return total
    if not (y >= 0 and x >= 0 and y < h and x < w):
        return 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly = 0.0 if y0 >= h - 1 else y - y0
    lx = 0.0 if x0 >= w - 1 else x - x0
    return ((1 - ly) * (1 - lx) * plane[y0, x0] + (1 - ly) * lx * plane[y0, x1]
            + ly * (1 - lx) * plane[y1, x0] + ly * lx * plane[y1, x1])


def _ops(name, modulated, params_class, what):
    forward, backward = _kernel(name, modulated)
    names = _names(modulated)
    backward_name = f"_backward_{name.removeprefix('_')}"
    return [
        Op(name, params=params_class, num_inputs=lambda a: len(names(a)), input_names=names,
           infer_shape=_infer(name, modulated), compute={XP: forward},
           gradient=Gradient(backward_name, ("out_grad", "in_data")),
           domain=Domain(_sample(modulated), reference=_reference(name, modulated,
                                                                  params_class)),
           description=what),
        Op(backward_name, params=params_class, num_inputs=lambda a: 1 + len(names(a)),
           num_outputs=lambda a: len(names(a)), compute={XP: backward}, is_backward=True,
           forward_op=name),
    ]


OPS = [
    *_ops("_contrib_DeformableConvolution", False, DeformableConvolutionParam,
          "Deformable 2-D convolution: each kernel tap reads the data, by bilinear "
          "interpolation, at its place plus the (dy, dx) the offset input gives per "
          "deformable group and output position.  Output (N, num_filter, Ho, Wo).  "
          "Gradients for data, offset, weight and bias."),
    *_ops("_contrib_ModulatedDeformableConvolution", True, ModulatedDeformableConvolutionParam,
          "Modulated deformable 2-D convolution (DCN v2): deformable convolution whose "
          "samples are also scaled by the mask input.  Gradients for data, offset, mask, "
          "weight and bias."),
]
