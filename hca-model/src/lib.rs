//! HCA pipelines: traffic, transmit scheduling, CNPs, rate control. Built on `rtl-model` blocks.
