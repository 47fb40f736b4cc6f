"""theon.tensor.nnet.conv: Theano's old theano.tensor.nnet.conv.conv2d (ConvOp).

A true convolution (the filters flipped) with border_mode 'valid' or 'full' and a stride;
image_shape and filter_shape are optional hints. It runs the same op as
theon.tensor.nnet.conv2d.
"""
from .abstract_conv import conv2d as _abstract_conv2d

__all__ = ["conv2d"]


def conv2d(input, filters, image_shape=None, filter_shape=None, border_mode="valid", subsample=(1, 1), **kargs):
    """Theano's legacy conv2d: border_mode 'valid' or 'full'; always flips the filters."""
    if border_mode not in ("valid", "full"):
        raise ValueError("theano.tensor.nnet.conv.conv2d: border_mode must be 'valid' or 'full', got %r"
                         % (border_mode,))
    for key in kargs:
        if key not in ("imshp", "kshp", "nkern", "bsize"):  # ConvOp's shape hints
            raise TypeError("conv2d() got an unexpected keyword argument %r" % (key,))
        from ...errors import warn_ignored_once
        warn_ignored_once(f"theano.tensor.nnet.conv.conv2d({key}=...)",
                          "ConvOp's shape hints choose nothing here (image_shape and filter_shape are the hints "
                          "Theon checks)")
    return _abstract_conv2d(input, filters, input_shape=image_shape, filter_shape=filter_shape,
                            border_mode=border_mode, subsample=subsample, filter_flip=True)
