// Timing copies the way every table in this chapter does.
#pragma once

#include <cstddef>

// Milliseconds one cudaMemcpy(destination, source, bytes, cudaMemcpyDefault) takes: events
// around `repeats` back-to-back copies (so that copies of a few KiB last long enough to time),
// divided by `repeats`; `warmup` untimed rounds first, then the median of `runs` rounds.
double time_copy_ms(void* destination, const void* source, std::size_t bytes, int repeats,
                    int warmup, int runs);
