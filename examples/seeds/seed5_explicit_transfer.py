# Seed document 001_1f0c91a50e0ea987 ("Using multiple GPUs"), "Explicit transfers of data",
# unchanged but for the import. It needs a context map naming gpudev, e.g.
#   THEON_FLAGS="contexts=gpudev->cuda0"   (or gpudev->cpu without a GPU)
import theon as theano

v = theano.tensor.fmatrix()

# Move to the device associated with 'gpudev'
gv = v.transfer('gpudev')

# Move back to the cpu
cv = gv.transfer('cpu')
