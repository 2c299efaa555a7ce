# frozen_string_literal: true

module Fidelity
  # Tests of Ruby's own suite left out in every condition, plain included,
  # each with its reason: they cannot run from an installed Ruby, or their
  # outcome changes from run to run without the profiler too. Keys are the
  # test files; test-unit tests are named "Class#method". Nothing else is
  # left out.
  EXCLUDED = {
    "test_fiber.rb" => {
      "TestFiber#test_fatal_in_fiber" =>
        "loads -test-/fatal/rb_fatal, an extension only Ruby's build tree has"
    }
  }.freeze
end
