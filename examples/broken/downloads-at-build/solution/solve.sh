#!/bin/bash
stamp init /app
