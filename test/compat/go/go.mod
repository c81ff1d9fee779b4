module sendline.dev/compat

go 1.23

require github.com/mrz1836/postmark v1.9.2
