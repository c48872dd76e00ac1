library(testthat)
library(pdpx)

test_check("pdpx")
