#!/bin/sh
# SPDX-License-Identifier: MIT
# librvbank's BOOM half: test_rvbank under model boom.
RVBANK_TEST_MODEL=boom exec "${builddir:-.}/bank/test_rvbank"
