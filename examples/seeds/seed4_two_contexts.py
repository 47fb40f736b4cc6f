# Seed document 001_1f0c91a50e0ea987 ("Using multiple GPUs"), "A simple graph on two GPUs",
# unchanged but for the import (the seed's text lost some characters; restored as in issue 28).
# It needs a context map naming dev0 and dev1, e.g.
#   THEON_FLAGS="contexts=dev0->cuda0;dev1->cuda1"   (two GPUs)
#   THEON_FLAGS="contexts=dev0->cuda0;dev1->cuda0"   (one GPU, two names)
#   THEON_FLAGS="contexts=dev0->cpu;dev1->cpu"       (two cpu contexts)
import numpy
import theon as theano
v01 = theano.shared(numpy.random.random((1024, 1024)).astype('float32'), target='dev0')
v02 = theano.shared(numpy.random.random((1024, 1024)).astype('float32'), target='dev0')
v11 = theano.shared(numpy.random.random((1024, 1024)).astype('float32'), target='dev1')
v12 = theano.shared(numpy.random.random((1024, 1024)).astype('float32'), target='dev1')
f = theano.function([], [theano.tensor.dot(v01, v02), theano.tensor.dot(v11, v12)])
f()
