// Theon: a symbolic tensor compiler. Include this header for the whole C++ API.
#pragma once
#include <theon/array.hpp>
#include <theon/config.hpp>
#include <theon/contexts.hpp>
#include <theon/dtype.hpp>
#include <theon/error.hpp>
#include <theon/function.hpp>
#include <theon/grad.hpp>
#include <theon/graph.hpp>
#include <theon/kernel_cache.hpp>
#include <theon/pool.hpp>
#include <theon/bn.hpp>
#include <theon/printing.hpp>
#include <theon/random.hpp>
#include <theon/tensor.hpp>
#include <theon/var.hpp>
