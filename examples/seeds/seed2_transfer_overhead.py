# Seed document 000_cbe02387a7b1d037, example 2 ("Data Transfer Overhead"), unchanged but
# for the two imports. Without a CUDA device, compiling warns and runs on the CPU.
import theon as theano
import theon.tensor as T
import numpy as np
import time

# Define symbolic variables
x = T.matrix('x')
w = theano.shared(np.random.randn(10, 5).astype(theano.config.floatX))
b = theano.shared(np.random.randn(5).astype(theano.config.floatX))

# Define the computation (matrix multiplication + bias)
y = T.dot(x, w) + b

# Compile the Theano function targeting GPU
theano.config.device = 'cuda'
theano.config.floatX = 'float32'
f = theano.function([x], y)

# Generate sample input data (small size)
x_data_small = np.random.randn(10, 10).astype(theano.config.floatX)
x_data_large = np.random.randn(10000, 10).astype(theano.config.floatX)


# Measure execution time with small input
start_time_small = time.time()
for _ in range(100):
    result_small = f(x_data_small)
end_time_small = time.time()
print(f"Small input execution time: {end_time_small - start_time_small:.4f} seconds")

#Measure execution time with large input
start_time_large = time.time()
for _ in range(100):
    result_large = f(x_data_large)
end_time_large = time.time()

print(f"Large input execution time: {end_time_large - start_time_large:.4f} seconds")
