"""theon.sandbox: Theano's sandbox module paths that programs import (rng_mrg, cuda)."""
