# Seed document 000_cbe02387a7b1d037, example 3 ("Unoptimized Operations"), unchanged but
# for the imports (`import theano.gpuarray` -> `import theon.gpuarray`). Without a CUDA
# device, compiling warns and runs on the CPU.
import theon as theano
import theon.tensor as T
import numpy as np
import time
import theon.gpuarray

# Define symbolic variables
x = T.matrix('x')
w = theano.shared(np.random.randn(10, 5).astype(theano.config.floatX), borrow=True)
b = theano.shared(np.random.randn(5).astype(theano.config.floatX), borrow=True)

# Define a computationally intensive operation
y = T.nnet.relu(T.dot(x, w) + b)
y = T.exp(y)
y = T.log(y)

# Compile the Theano function targeting GPU
theano.config.device = 'cuda'
theano.config.floatX = 'float32'
f = theano.function([x], y)
# Generate sample input data
x_data = np.random.randn(10000, 10).astype(theano.config.floatX)

# Measure execution time
start_time = time.time()
result = f(x_data)
end_time = time.time()
print(f"Execution time: {end_time - start_time:.4f} seconds")
