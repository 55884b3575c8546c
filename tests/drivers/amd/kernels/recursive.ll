; recursive.ll: recursion gives the kernel a dynamic stack (USES_DYNAMIC_STACK), which tg refuses.
define internal i32 @depth(i32 %n) noinline {
  %z = icmp eq i32 %n, 0
  br i1 %z, label %done, label %more
more:
  %m = sub i32 %n, 1
  %r = call i32 @depth(i32 %m)
  %s = add i32 %r, 1
  ret i32 %s
done:
  ret i32 0
}

define amdgpu_kernel void @recursive(ptr addrspace(1) %out, i32 %n) #0 {
  %v = call i32 @depth(i32 %n)
  store i32 %v, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
